/**
 * HTML by tagged template: every interpolated value is escaped unless it is already SafeHtml
 * (another template's output), so a user's input can never become markup.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Date) return escapeHtml(value.toISOString().replace('T', ' ').slice(0, 19) + ' UTC');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** A hidden CSRF field for a form. */
export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/** A labelled input. */
export function field(
  label: string,
  name: string,
  options: { type?: string; value?: string | undefined; required?: boolean; autocomplete?: string; hint?: string } = {},
) {
  const id = `f-${name}`;
  return html`<label for="${id}">${label}</label><input id="${id}" name="${name}" type="${options.type ?? 'text'}" value="${options.value ?? ''}"${
    options.required === false ? '' : new SafeHtml(' required')
  }${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}>${options.hint ? html`<div class="muted">${options.hint}</div>` : ''}`;
}

/** A notice box; `error` styles it as a problem. */
export const notice = (message: string | undefined, kind: 'ok' | 'error' = 'ok') =>
  message
    ? html`<div class="notice ${kind === 'error' ? 'error' : ''}" id="${kind === 'error' ? 'error' : 'notice'}">${message}</div>`
    : '';

/** A posted form: a repeated field (checkboxes) arrives as an array. */
export type Form = Record<string, string | string[] | undefined>;

/** A form field's values, whether it was sent once, several times or not at all. */
export const formValues = (value: string | string[] | undefined): string[] =>
  Array.isArray(value) ? value : value ? [value] : [];

/** A form field sent once (the last value if it came several times). */
export const formValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.at(-1) : value;

/** A posted form's single-value fields: a field sent twice counts once (its last value); anything else is absent. */
export function formFields(body: unknown): Record<string, string | undefined> {
  if (!body || typeof body !== 'object') return {};
  return Object.fromEntries(Object.entries(body as Form).map(([key, value]) => [key, formValue(value)]));
}
