/**
 * Writes the configuration tables of README.md from the apps' config schemas, between
 * `<!-- config:<app>:start -->` and `<!-- config:<app>:end -->`. Run `pnpm docs:config`
 * after changing a setting; each app's test fails while its table is out of date.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { documentSettings, renderSettingsTable } from '@repo/config';
import { readmePath, replaceSection } from '@repo/testing';
import { configSchema as collabApi } from '../apps/collab-api/src/config.js';
import { configSchema as inboxApi } from '../apps/inbox-api/src/config.js';
import { configSchema as inboxMcp } from '../apps/inbox-mcp/src/config.js';

let readme = await readFile(readmePath, 'utf8');
for (const [app, schema] of Object.entries({ 'inbox-api': inboxApi, 'collab-api': collabApi, 'inbox-mcp': inboxMcp })) {
  readme = replaceSection(readme, `config:${app}`, renderSettingsTable(documentSettings(schema)));
}
await writeFile(readmePath, readme);
