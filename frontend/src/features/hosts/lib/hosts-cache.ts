import type { HostPublic, HostsPublic } from '../../../lib/api/types';

/** The host list with one host replaced by the server's fresh copy (after a PATCH / PUT / DELETE). */
export function replaceHost(old: HostsPublic | undefined, host: HostPublic): HostsPublic | undefined {
  return old ? { ...old, data: old.data.map((h) => (h.id === host.id ? host : h)) } : old;
}
