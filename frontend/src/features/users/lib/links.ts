/** The server answers a sign-in link as a path (`/signin/link#hblink_…`); a person needs the whole
 * address to send on. An absolute link is kept as it is. */
export function absoluteLink(link: string, origin: string = globalThis.location?.origin ?? ''): string {
  if (/^https?:\/\//i.test(link)) return link;
  return `${origin.replace(/\/$/, '')}${link.startsWith('/') ? '' : '/'}${link}`;
}
