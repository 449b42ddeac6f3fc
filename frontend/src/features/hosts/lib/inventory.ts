// The inventory is free-form JSON reported by the runner; read it defensively into what the card
// shows. A missing fact stays missing (shown as —), never guessed.
import type { HostPublic, Peak } from '../../../lib/api/types';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

export interface CpuView {
  model: string | null;
  vendor: string | null;
  sockets: number | null;
  cores: number | null;
  threads: number | null;
  isa: string[];
  bestIsa: string | null;
  fmaUnits: number | null;
  maxMhz: number | null;
  /** The runner's CPU collector failed; its message. */
  error: string | null;
}

export function readCpu(inventory: unknown): CpuView {
  const cpu = obj(obj(inventory).cpu);
  const sockets = num(cpu.sockets);
  const perSocket = num(cpu.cores_per_socket);
  const cores = num(cpu.cores) ?? (perSocket !== null ? perSocket * (sockets ?? 1) : null);
  const threadsPerCore = num(cpu.threads_per_core);
  const threads =
    num(cpu.threads) ?? num(cpu.logical_cpus) ?? num(cpu.cpus_online) ?? (cores !== null && threadsPerCore !== null ? cores * threadsPerCore : null);
  const isa = Array.isArray(cpu.isa) ? cpu.isa.filter((x): x is string => typeof x === 'string') : [];
  return {
    model: str(cpu.model) ?? str(cpu.model_name),
    vendor: str(cpu.vendor),
    sockets,
    cores,
    threads,
    isa,
    bestIsa: str(cpu.best_isa),
    fmaUnits: num(cpu.fma_units),
    maxMhz: num(cpu.max_mhz),
    error: str(cpu.error),
  };
}

export function readMemoryBytes(inventory: unknown): number | null {
  return num(obj(obj(inventory).memory).total_bytes);
}

export function readOs(inventory: unknown): { kernel: string | null; distribution: string | null } {
  const os = obj(obj(inventory).os);
  return { kernel: str(os.kernel), distribution: str(os.distribution) };
}

export function readLabels(host: HostPublic): { provider: string | null; instanceType: string | null; region: string | null } {
  const l = obj(host.labels);
  return { provider: str(l.provider), instanceType: str(l.instance_type), region: str(l.region) };
}

export interface PeakView {
  key: string;
  peak: Peak | null;
  note: string | null;
}

/** Peaks the backend computed (and, for unknown ones, its note saying why). */
export function readPeaks(host: HostPublic): PeakView[] {
  const peaks = obj(host.peaks) as Record<string, Peak | null>;
  const notes = obj((host as { peak_notes?: unknown }).peak_notes);
  const keys = [...new Set([...Object.keys(peaks), ...Object.keys(notes)])];
  return keys.map((key) => ({ key, peak: peaks[key] ?? null, note: str(notes[key]) }));
}
