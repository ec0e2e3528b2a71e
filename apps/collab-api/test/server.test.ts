import { describeApiProcess } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { TEST_SECRET } from './context.js';

// With DATABASE_URL set, the service needs a token secret (only the embedded database runs
// without one); the processes these checks start inherit it from this environment.
process.env.COLLAB_JWT_SECRET = TEST_SECRET;

describeApiProcess('collab-api', { appRoot });
