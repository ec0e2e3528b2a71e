import { z } from 'zod';
import { displayName, id, pageOf, pageQuery, timestamp } from '../shared/schemas.js';

export const createOrganizationBody = z
  .object({ name: displayName({ description: 'Name of the organization', example: 'Acme support agents' }) })
  .strict();

export type CreateOrganizationInput = z.output<typeof createOrganizationBody>;

export const organizationParams = z.object({ organization_id: id });

export const updateOrganizationBody = z
  .object({
    name: displayName({ description: 'Name of the organization', example: 'Acme support agents' }).optional(),
    sending_enabled: z.boolean().optional().meta({
      description: 'Kill switch: false, and every send from every inbox of the organization answers 403 `sending_disabled`',
    }),
  })
  .strict();

export type UpdateOrganizationInput = z.output<typeof updateOrganizationBody>;

export const listOrganizationsQuery = z.object(pageQuery).strict();

export const organizationSchema = z
  .object({
    id: z.string().meta({ description: 'A UUID, or `default`: the organization that always exists' }),
    name: z.string(),
    sending_enabled: z.boolean().meta({ description: 'The organization’s kill switch' }),
    created_at: timestamp,
  })
  .meta({ id: 'Organization' });

export type OrganizationResponse = z.input<typeof organizationSchema>;

export const organizationPage = pageOf(organizationSchema).meta({ id: 'OrganizationPage' });
