// Hosts tested together (POST /api/meshes): all pairs in rounds, or many clients to one server; the matrix of a
// mesh, polled while it runs; the recent ones; start and cancel. Export: plain links (the server writes the file).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiUrl } from '../../../config/env';
import { api } from '../../../lib/api/client';
import { unwrap } from '../../../lib/api/errors';
import type { paths } from '../../../lib/api/schema';

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
export type Mesh = Json<paths['/api/meshes/{mesh_id}']['get']['responses'][200]>;
export type MeshCell = Mesh['cells'][number];
export type MeshCreate = NonNullable<paths['/api/meshes']['post']['requestBody']>['content']['application/json'];
export type MeshMode = MeshCreate['mode'];

export const meshKeys = {
  list: ['meshes', 'list'] as const,
  one: (id: number) => ['meshes', 'detail', id] as const,
};

/** How often a running mesh is read again. */
export const MESH_POLL_MS = 3_000;

const running = (m: Mesh | undefined) => m !== undefined && (m.status === 'queued' || m.status === 'running');

export function useMeshes() {
  return useQuery({
    queryKey: meshKeys.list,
    queryFn: ({ signal }) => unwrap(api.GET('/api/meshes', { signal })),
    refetchInterval: (q) => (q.state.data?.data.some(running) ? MESH_POLL_MS * 2 : false),
  });
}

export function useMesh(id: number) {
  return useQuery({
    queryKey: meshKeys.one(id),
    queryFn: ({ signal }) => unwrap(api.GET('/api/meshes/{mesh_id}', { params: { path: { mesh_id: id } }, signal })),
    refetchInterval: (q) => (running(q.state.data) ? MESH_POLL_MS : false),
  });
}

export function useStartMesh() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: MeshCreate) => unwrap(api.POST('/api/meshes', { body })),
    onSuccess: (m) => {
      qc.setQueryData(meshKeys.one(m.id), m);
      void qc.invalidateQueries({ queryKey: meshKeys.list });
    },
  });
}

export function useCancelMesh(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/meshes/{mesh_id}/cancel', { params: { path: { mesh_id: id } } })),
    onSuccess: (m) => {
      qc.setQueryData(meshKeys.one(m.id), m);
      void qc.invalidateQueries({ queryKey: meshKeys.list });
    },
  });
}

export function meshExportUrl(id: number, format: 'csv' | 'json'): string {
  return apiUrl(`/api/meshes/${id}/export?format=${format}`);
}
