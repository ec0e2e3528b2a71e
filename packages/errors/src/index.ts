export * from './errors.js';
export * from './formats.js';
export * from './middleware.js';
export * from './zod.js';
