import { z } from 'zod';
import { ROLE_NAMES } from '../access/index.js';
import { displayName, email, idParams, oneOf, timestamp } from '../shared/schemas.js';

const role = oneOf(ROLE_NAMES);

export const userSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLE_NAMES),
    identity_provider_id: z
      .string()
      .nullable()
      .meta({ description: "The `sub` of the user's tokens; null until the first sign-in" }),
    created_at: timestamp,
  })
  .meta({ id: 'User' });

export type UserResponse = z.input<typeof userSchema>;

export const userList = z.object({ users: z.array(userSchema) }).meta({ id: 'UserList' });

export const userParams = idParams('user_id');

export const createUserBody = z.strictObject({
  email,
  name: displayName(),
  role: role.default('Dataset user'),
});

export type CreateUserInput = z.output<typeof createUserBody>;

export const updateUserBody = z.strictObject({
  email,
  name: displayName(),
  role: role.optional().meta({ description: 'Absent keeps the current role' }),
});

export type UpdateUserInput = z.output<typeof updateUserBody>;

export const roleBody = z.strictObject({ role });
