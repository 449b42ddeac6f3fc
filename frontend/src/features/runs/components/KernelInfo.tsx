// The kernel's own start event: ISA it chose, vector width, FMA, measured clock.
import { formatNumber } from '../../../lib/format';

type Obj = Record<string, unknown>;

export function KernelInfo({ info }: { info: unknown }) {
  if (typeof info !== 'object' || info === null) return <p className="muted small">Kernel not started yet.</p>;
  const k = info as Obj;
  const items: [string, string][] = [];
  const add = (label: string, v: unknown, fmt: (x: never) => string = String) => {
    if (v !== undefined && v !== null && v !== '') items.push([label, fmt(v as never)]);
  };
  add('Kernel', k.kernel);
  add('ISA', k.isa);
  add('Vector bits', k.vector_bits);
  add('FMA', k.fma, (x: boolean) => (x ? 'yes' : 'no'));
  add('Measured clock', k.clock_ghz, (x: number) => `${formatNumber(x, 4)} GHz`);
  add('FLOP per cycle', k.flops_per_cycle);
  add('CPUs online', k.cpus_online);
  add('Timer resolution', k.timer_resolution_ns, (x: number) => `${x} ns`);
  return (
    <dl className="facts facts-inline" aria-label="Kernel">
      {items.map(([label, v]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
