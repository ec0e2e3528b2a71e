import { setting } from '@repo/config';
import type { z } from 'zod';

/** The approvals' environment variables, to spread into the app's configuration schema. */
export function approvalSettings() {
  return {
    COLLAB_INTERNAL_TOKEN: setting
      .string()
      .optional()
      .describe(
        'Token of the internal approval-expiry operation (`POST /api/v1/approval/expire?internal_token=`), for an operator or an outside scheduler to run the expiry at once; compared in constant time. The worker expires requests hourly without it. Unset: the operation always answers 401.',
      ),
    COLLAB_PUBLIC_UI_URL: setting
      .url()
      .optional()
      .describe(
        "Base URL of the web console where Org admins review approval requests (this service's /console, as the public reaches it): the request's e-mail links to `{COLLAB_PUBLIC_UI_URL}/approvals/{approval_id}`. Unset: it links to `{PUBLIC_BASE_URL}/console/approvals/{approval_id}`.",
      ),
  };
}

export type ApprovalSettings = z.output<z.ZodObject<ReturnType<typeof approvalSettings>>>;
