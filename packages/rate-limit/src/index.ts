export type { Redis } from 'ioredis';
export { connectRedis, createRateLimit, limitRequests, type RateLimit, type RateLimitOptions } from './rate-limit.js';
export { createWindowedRateLimit, type WindowedRateLimit, type WindowedRateLimitOptions } from './windows.js';
