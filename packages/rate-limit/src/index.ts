export { connectRedis, createRateLimit, limitRequests, type RateLimit, type RateLimitOptions } from './rate-limit.js';
