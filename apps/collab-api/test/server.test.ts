import { describeApiProcess } from '@repo/testing';
import { appRoot } from '../src/paths.js';
import { TEST_SECRET } from './context.js';

// With DATABASE_URL set, the service needs a token secret (only the embedded database runs
// without one); every process these checks start gets it in its environment.
describeApiProcess('collab-api', { appRoot, env: { COLLAB_JWT_SECRET: TEST_SECRET } });
