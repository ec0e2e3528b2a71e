import { describeOperationsEndpoints } from '@repo/testing';
import { buildApp } from '../src/app.js';
import { createDatabaseClient } from '../src/database.js';
import { createTestContext } from './context.js';

describeOperationsEndpoints('collab-api', {
  unknownPath: '/api/v1/nothing-here',
  errorBody: (_code, message) => ({ detail: message }),
  setUp: async () => {
    const ctx = await createTestContext();
    return {
      app: ctx.app,
      withUnreachableDatabase: () => {
        const db = createDatabaseClient('postgresql://postgres@127.0.0.1:1/collab', 1);
        return { app: buildApp({ ...ctx.deps, db }), close: () => db.$disconnect() };
      },
      close: () => ctx.close(),
    };
  },
});
