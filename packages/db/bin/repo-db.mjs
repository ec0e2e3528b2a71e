#!/usr/bin/env node
// Development tooling runs straight from TypeScript source through tsx; see src/dev/cli.ts.
import { register } from 'tsx/esm/api';

register();
await import('../src/dev/cli.ts');
