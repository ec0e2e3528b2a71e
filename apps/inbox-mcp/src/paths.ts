import path from 'node:path';

/** The app's folder (this file sits in src/ or, compiled, in dist/). */
export const appRoot = path.resolve(import.meta.dirname, '..');
