import { uuidv7 } from '../src/ids.js';

describe('ids of rows a raw statement inserts', () => {
  it('are UUID version 7: the time first, so they sort as they were made', () => {
    const at = Date.parse('2026-11-26T06:00:00.123Z');
    const id = uuidv7(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    expect(uuidv7(at + 1) > id).toBe(true);
    expect(uuidv7(at)).not.toBe(id);
  });
});
