import { z } from 'zod';

export interface SettingDoc {
  name: string;
  /** What a valid value looks like, e.g. "an integer from 0 to 65535". */
  expects: string;
  /** The default as it would be written in the environment; undefined when there is none. */
  default?: string;
  required: boolean;
  description: string;
}

/** Describes every variable of a configuration schema, for documentation and its checks. */
export function documentSettings(schema: z.ZodObject): SettingDoc[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    let current = field as z.ZodType;
    let description = current.description;
    let expects: string | undefined;
    let defaultValue: unknown;
    let required = true;
    // Unwrap .default()/.optional() layers, collecting what each layer carries.
    for (;;) {
      description ??= current.description;
      expects ??= (current.meta() as { expects?: string } | undefined)?.expects;
      if (current instanceof z.ZodDefault) {
        defaultValue = current.def.defaultValue;
        required = false;
        current = current.def.innerType as z.ZodType;
      } else if (current instanceof z.ZodOptional) {
        required = false;
        current = current.def.innerType as z.ZodType;
      } else {
        break;
      }
    }
    return {
      name,
      expects: expects ?? 'a string',
      default: formatDefault(defaultValue),
      required,
      description: description ?? '',
    };
  });
}

/** A default as it would be written in the environment. */
function formatDefault(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.join(',');
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : JSON.stringify(value);
}

/** A Markdown table of the settings, as the README shows them. */
export function renderSettingsTable(docs: SettingDoc[]): string {
  const rows = docs.map((doc) => {
    const fallback = doc.default !== undefined ? `\`${doc.default}\`` : doc.required ? '**required**' : '(unset)';
    return `| \`${doc.name}\` | ${fallback} | ${doc.description} Expects ${doc.expects}. |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
