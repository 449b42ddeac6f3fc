// The inventory is free-form JSON reported by the runner; read it defensively into what the card
// shows. A missing fact stays missing (shown as —), never guessed.
import type { HostPublic, Peak } from '../../../lib/api/types';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** How many GPUs the inventory lists (`gpus`: those the CUDA kernel can use), 0 for none; null when it does not
 * say (a runner from before, or a PCI bus it could not read): the server refuses a GPU job only on a host with 0. */
export function readGpus(inventory: unknown): number | null {
  const gpus = obj(inventory).gpus;
  return Array.isArray(gpus) ? gpus.length : null;
}

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

export interface Fact {
  label: string;
  value: string;
}

const CACHE_KEYS: [string, string][] = [
  ['l1d_bytes', 'L1d'],
  ['l1i_bytes', 'L1i'],
  ['l2_bytes', 'L2'],
  ['l3_bytes', 'L3'],
];

/** Per-core cache sizes as the runner reports them (bytes; shown in KiB/MiB by the caller). */
export function readCaches(inventory: unknown): { label: string; bytes: number }[] {
  const cpu = obj(obj(inventory).cpu);
  return CACHE_KEYS.flatMap(([key, label]) => {
    const bytes = num(cpu[key]);
    return bytes !== null ? [{ label, bytes }] : [];
  });
}

const yesNo = (v: unknown): string | null => (typeof v === 'boolean' ? (v ? 'yes' : 'no') : str(v));

/** Virtualisation, frequency governor and turbo, runner version: what explains a surprising figure. */
export function readPlatform(inventory: unknown): Fact[] {
  const inv = obj(inventory);
  const virt = obj(inv.virtualization);
  const gov = obj(inv.governor);
  const cpu = obj(inv.cpu);
  const runner = obj(inv.runner);
  const facts: [string, string | null][] = [
    [
      'Virtualisation',
      virt.virtualized === false
        ? 'bare metal'
        : virt.virtualized === true
          ? [str(virt.hypervisor) ?? 'virtualised', str(virt.product_name)].filter(Boolean).join(' · ')
          : null,
    ],
    ['Container', str(virt.container)],
    ['Governor', str(gov.governor)],
    ['Frequency driver', str(gov.driver)],
    ['Turbo / boost', yesNo(gov.boost)],
    ['Vector width', num(cpu.vector_bits) !== null ? `${num(cpu.vector_bits)} bit` : null],
    ['FMA', yesNo(cpu.fma)],
    ['Architecture', str(obj(inv.os).arch)],
    ['Runner', str(runner.version) ? `${str(runner.version)}${str(runner.python) ? ` (Python ${str(runner.python)})` : ''}` : null],
  ];
  return facts.filter((f): f is [string, string] => f[1] !== null).map(([label, value]) => ({ label, value }));
}

/** Disks or NICs when the inventory lists them: one line each, from whatever fields are present. */
export function readDevices(inventory: unknown, key: 'disks' | 'nics'): string[] {
  // The runner nests them (disks.devices, nics.interfaces); older inventories had a flat list.
  const section = obj(inventory)[key];
  const nested = obj(section)[key === 'disks' ? 'devices' : 'interfaces'];
  const list = Array.isArray(section) ? section : nested;
  if (!Array.isArray(list)) return [];
  return list.map((item) => {
    const d = obj(item);
    const name = str(d.name) ?? str(d.device) ?? str(d.path) ?? '?';
    const kind = str(d.type) ?? str(d.kind) ?? (d.rotational === true ? 'rotational' : d.rotational === false ? 'SSD' : null);
    const parts = [str(d.model), str(d.driver), kind, d.operstate === 'down' ? 'down' : null, d.loopback === true ? 'loopback' : null].filter(Boolean);
    const size = num(d.size_bytes) ?? num(d.bytes);
    const speed = num(d.speed_mbit_s) ?? num(d.speed_mbps);
    return [name, ...parts, size !== null ? `${Math.round(size / 1024 ** 3)} GiB` : null, speed !== null ? `${speed} Mbit/s` : null]
      .filter(Boolean)
      .join(' · ');
  });
}

/** The disk targets the host's runner offers a disk job (disks.targets: its owner configured them by name). */
export function readDiskTargets(inventory: unknown): string[] {
  const list = obj(obj(inventory).disks).targets;
  if (!Array.isArray(list)) return [];
  return list.flatMap((item) => {
    const t = obj(item);
    const name = str(t.name);
    if (!name) return [];
    const free = num(t.free_bytes);
    return [[name, str(t.fstype), str(t.device), free !== null ? `${Math.round(free / 1024 ** 3)} GiB free` : null].filter(Boolean).join(' · ')];
  });
}
