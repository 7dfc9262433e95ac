import type { Environment } from '../domain/auth/permissions.js';
import type { User } from '../domain/users/user.js';
import { csrfField, html, SafeHtml } from './html.js';

/** The pages' only stylesheet, inline: nothing is loaded from anywhere else. */
const STYLE = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;color:#1b1f24;background:#f6f7f9}
header{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;padding:.6rem 1.5rem;background:#102a43;color:#fff}
header a{color:#d9e2ec;text-decoration:none;white-space:nowrap}header a.on{color:#fff;font-weight:600}
header .brand{font-weight:700;color:#fff;margin-right:1rem}header .right{margin-left:auto;display:flex;gap:.8rem;align-items:center}
main{max-width:64rem;margin:1.5rem auto;padding:0 1.5rem}
.card{background:#fff;border:1px solid #d9e2ec;border-radius:8px;padding:1.2rem 1.5rem;margin-bottom:1.2rem}
.narrow{max-width:26rem;margin:3rem auto}
h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:0 0 .8rem}
table{border-collapse:collapse;width:100%;font-size:14px}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #e4e7eb;vertical-align:top}
label{display:block;margin:.6rem 0 .2rem;font-weight:600;font-size:14px}
input[type=text],input[type=email],input[type=password],input[type=url],select,textarea{width:100%;padding:.45rem .55rem;border:1px solid #bcccdc;border-radius:6px;font:inherit}
button{padding:.45rem 1rem;border:0;border-radius:6px;background:#2563eb;color:#fff;font:inherit;cursor:pointer;margin-top:.8rem}
button.secondary{background:#e4e7eb;color:#1b1f24}button.danger{background:#c53030}
form.inline{display:inline}form.inline button{margin:0;padding:.25rem .6rem;font-size:13px}
.notice{padding:.7rem 1rem;border-radius:6px;margin-bottom:1rem;background:#e6f6ec;border:1px solid #a3d9b1}
.error{background:#fdecec;border-color:#f5a9a9}.secret{font-family:ui-monospace,monospace;word-break:break-all;background:#fffbea;border:1px dashed #d69e2e;padding:.6rem;border-radius:6px}
.muted{color:#627d98;font-size:13px}.tag{display:inline-block;padding:0 .4rem;border-radius:4px;background:#e4e7eb;font-size:12px;margin-right:.2rem}
code{font-family:ui-monospace,monospace;font-size:13px}
`;

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in user: shows the dashboard's navigation. */
  user?: User | undefined;
  csrf?: string | undefined;
  environment?: Environment | undefined;
  /** Which navigation entry is current. */
  section?: string;
}

const SECTIONS: Array<[string, string, string]> = [
  ['overview', 'Overview', '/dashboard'],
  ['keys', 'API keys', '/dashboard/keys'],
  ['controls', 'Controls', '/dashboard/controls'],
  ['webhooks', 'Webhooks', '/dashboard/webhooks'],
  ['events', 'Events', '/dashboard/events'],
  ['connected', 'Connected apps', '/dashboard/connected-apps'],
  ['apps', 'Developer apps', '/dashboard/apps'],
  ['businesses', 'Businesses', '/dashboard/businesses'],
  ['security', 'Security', '/dashboard/security'],
  ['audit', 'Audit trail', '/dashboard/audit'],
];

export function page({ title, body, user, csrf, environment, section }: PageOptions): string {
  const envQuery = environment ? `?env=${environment}` : '';
  const sectionHref = SECTIONS.find(([key]) => key === section)?.[2] ?? '/dashboard';
  const nav = user
    ? html`<header><span class="brand">Partner Gateway</span>
${SECTIONS.map(([key, label, href]) => html`<a href="${href}${envQuery}" class="${key === section ? 'on' : ''}">${label}</a>`)}
<span class="right">${environment ? html`<a href="${sectionHref}?env=${environment === 'sandbox' ? 'production' : 'sandbox'}" id="env-switch">${environment} ⇄</a>` : ''}
<span class="muted" style="color:#9fb3c8">${user.email}</span>
${csrf ? html`<form class="inline" method="post" action="/signout">${csrfField(csrf)}<button class="secondary" id="sign-out">Sign out</button></form>` : ''}</span></header>`
    : html`<header><span class="brand">Partner Gateway</span></header>`;
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · Partner Gateway</title><style>${new SafeHtml(STYLE)}</style></head>
<body>${nav}<main>${body}</main></body></html>`.value;
}
