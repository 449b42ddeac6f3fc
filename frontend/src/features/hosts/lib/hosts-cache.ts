import type { QueryClient } from '@tanstack/react-query';
import type { HostPublic, HostsPublic } from '../../../lib/api/types';

/** The host list with one host replaced by the server's fresh copy (after a PATCH / PUT / DELETE). */
export function replaceHost(old: HostsPublic | undefined, host: HostPublic): HostsPublic | undefined {
  return old ? { ...old, data: old.data.map((h) => (h.id === host.id ? host : h)) } : old;
}

type Cached = HostsPublic | HostPublic | unknown;
const isList = (v: Cached): v is HostsPublic => typeof v === 'object' && v !== null && Array.isArray((v as HostsPublic).data);
const isHost = (v: Cached): v is HostPublic => typeof v === 'object' && v !== null && typeof (v as HostPublic).id === 'number';

/** Every cached copy of this host (the full list, the table's pages, the one-host query) replaced by the server's. */
export function putHost(qc: QueryClient, host: HostPublic): void {
  qc.setQueriesData({ queryKey: ['hosts'] }, (old: Cached) =>
    isList(old) ? replaceHost(old, host) : isHost(old) && old.id === host.id ? host : old,
  );
}

/** A deleted host out of every cached list. */
export function dropHost(qc: QueryClient, id: number): void {
  qc.setQueriesData({ queryKey: ['hosts'] }, (old: Cached) =>
    isList(old) ? { ...old, data: old.data.filter((h) => h.id !== id), count: Math.max(0, old.count - 1) } : old,
  );
}
