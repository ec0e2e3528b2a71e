import { documentSettings, renderSettingsTable } from '@repo/config';
import { readmeSection } from '@repo/testing';
import { configSchema } from '../src/config.js';

describe('configuration', () => {
  it('is documented in README.md, variable by variable (regenerate with `pnpm docs:config`)', async () => {
    expect(await readmeSection('config:collab-api')).toBe(renderSettingsTable(documentSettings(configSchema)));
  });
});
