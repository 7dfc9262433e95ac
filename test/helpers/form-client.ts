import { randomInt } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/**
 * A cookie-keeping client for the server-rendered pages, over inject: it reads the CSRF token of
 * the last page it loaded and sends it with the next form, as a browser would.
 */
export class FormClient {
  readonly cookies = new Map<string, string>();
  lastPage = '';

  /**
   * Each client comes from an address of its own, as separate browsers would (per-IP limits apply
   * per client); `userAgent` is sent as its User-Agent when given.
   */
  constructor(
    private readonly app: FastifyInstance,
    private readonly remoteAddress = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`,
    private readonly userAgent?: string,
  ) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.remember(
      await this.app.inject({
        method: 'GET',
        url,
        remoteAddress: this.remoteAddress,
        headers: this.headers({ accept: 'text/html' }),
      }),
    );
  }

  /** Posts a form; `_csrf` comes from the last page unless the form sets it. */
  async post(url: string, form: Record<string, string | string[]> = {}): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    const token = this.csrfToken();
    if (token && form._csrf === undefined) body.append('_csrf', token);
    for (const [key, value] of Object.entries(form))
      for (const v of Array.isArray(value) ? value : [value]) body.append(key, v);
    return this.remember(
      await this.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.remoteAddress,
        payload: body.toString(),
        headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }),
      }),
    );
  }

  csrfToken(): string | undefined {
    return this.lastPage.match(/name="_csrf" value="([^"]+)"/)?.[1];
  }

  /** The value of an element with this id on the last page (its text, tags stripped). */
  textOf(id: string): string | undefined {
    const match = this.lastPage.match(new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`));
    return match?.[1]?.replace(/<[^>]+>/g, '').trim();
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return {
      ...extra,
      ...(cookie ? { cookie } : {}),
      ...(this.userAgent === undefined ? {} : { 'user-agent': this.userAgent }),
    };
  }

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const c of response.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
      const cleared = c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() < Date.now()) || c.value === '';
      if (cleared) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    if ((response.headers['content-type'] ?? '').toString().includes('text/html')) this.lastPage = response.body;
    return response;
  }
}
