import { describeApiProcess } from '@repo/testing';
import { appRoot } from '../src/paths.js';

describeApiProcess('collab-api', { appRoot });
