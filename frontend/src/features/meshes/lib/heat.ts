// A mesh's matrix as a grid for the heat map: a row per driving host, a column per serving host, each cell the
// backend's figures (never recomputed here) with a heat from its Mbit/s against the fastest link measured: 0 the
// fastest, 1 nothing. Pure, so the page and its tests share it.
import type { Mesh, MeshCell } from '../api/meshes';

export interface HeatGrid {
  rows: { id: number; name: string }[];
  cols: { id: number; name: string }[];
  cell: (clientId: number, serverId: number) => MeshCell | undefined;
  /** The fastest link's Mbit/s: the scale's top. */
  top: number | null;
}

export function heatGrid(mesh: Mesh): HeatGrid {
  const names = new Map<number, string>(mesh.hosts.map((h) => [h.id, h.name]));
  if (mesh.server) names.set(mesh.server.id, mesh.server.name);
  const byKey = new Map<string, MeshCell>(mesh.cells.map((c) => [`${c.client_host_id}:${c.server_host_id}`, c]));
  const host = (id: number) => ({ id, name: names.get(id) ?? `host #${id}` });
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  const clients = [...new Set(mesh.cells.map((c) => c.client_host_id))].map(host).sort(byName);
  const servers = [...new Set(mesh.cells.map((c) => c.server_host_id))].map(host).sort(byName);
  // all pairs: every host both ways round, so the grid is square (one way: half of it measured)
  const all = mesh.mode === 'many_to_one' ? null : mesh.hosts.map((h) => host(h.id)).sort(byName);
  const figures = mesh.cells.map((c) => c.mbps).filter((v): v is number => v !== null && v !== undefined);
  return {
    rows: all ?? clients,
    cols: all ?? servers,
    cell: (clientId, serverId) => byKey.get(`${clientId}:${serverId}`),
    top: figures.length ? Math.max(...figures) : null,
  };
}

/** 0 (the fastest link) .. 1 (no throughput); null without a figure. */
export function heat(mbps: number | null | undefined, top: number | null): number | null {
  if (mbps === null || mbps === undefined || top === null || top <= 0) return null;
  return Math.min(1, Math.max(0, 1 - mbps / top));
}

/** The cell's background: green (fast) through amber to red (slow), as an HSL colour. */
export function heatColour(h: number | null): string | undefined {
  if (h === null) return undefined;
  const hue = Math.round(130 * (1 - h)); // 130 green .. 0 red
  return `hsl(${hue} 65% 82%)`;
}

export function isSlowest(mesh: Mesh, c: MeshCell): boolean {
  const s = mesh.slowest_link;
  return s !== null && s !== undefined && s.client_host_id === c.client_host_id && s.server_host_id === c.server_host_id;
}

export const MODE_LABELS: Record<Mesh['mode'], string> = {
  all_pairs: 'All pairs (each pair once)',
  all_pairs_both_ways: 'All pairs, both ways',
  many_to_one: 'Many to one',
};

/** Rounds the circle method needs for n hosts (n odd: one sits each round out); the server's plan, said ahead.
 * Many to one: one round per op (all clients together, one op at a time). */
export function roundsFor(mode: Mesh['mode'], n: number, ops = 1): number {
  if (mode === 'many_to_one') return ops;
  const oneWay = n % 2 === 0 ? n - 1 : n;
  return mode === 'all_pairs_both_ways' ? 2 * oneWay : oneWay;
}
