// Strong scaling of one operation (a fixed-work cpu run, `work` > 0): the same total work at each thread count,
// so its elapsed time says how much faster more threads do it. Per thread count: the slowest thread's elapsed
// time, the fastest one's, speedup T1/Tn and parallel efficiency T1/(n·Tn), every figure with the unit the API
// gives (RunResult.scaling, app/results/scaling.py); nothing is recomputed here.
import type { RunResult } from '../../../lib/api/types';
import { formatNumber, formatPercent } from '../../../lib/format';
import { opLabel } from '../../../lib/matrix';

export type StrongScaling = NonNullable<RunResult['scaling']>[number];

function unitText(unit: string | undefined): string {
  return unit ? ` (${unit})` : '';
}

export function ScalingTable({ scaling }: { scaling: StrongScaling }) {
  const units: Record<string, string> = scaling.units ?? {};
  const b = scaling.baseline_threads;
  const base = `T${b}`;
  const efficiency = b === 1 ? 'T1/(n·Tn)' : `${b}·${base}/(n·Tn)`;
  return (
    <div className="table-scroll">
      <table className="table scaling-table">
        <caption>
          {opLabel(scaling.op ?? null)}: strong scaling, {formatNumber(scaling.work, 15)} units of work per repeat split over the
          threads{b === 1 ? '' : `; relative to ${b} threads (the run has no 1-thread row)`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Threads</th>
            <th scope="col">Elapsed, slowest thread{unitText(units.elapsed_s)}</th>
            <th scope="col">Fastest thread{unitText(units.elapsed_min_s)}</th>
            <th scope="col">
              Speedup {base}/Tn{unitText(units.speedup)}
            </th>
            <th scope="col">Efficiency {efficiency}</th>
          </tr>
        </thead>
        <tbody>
          {scaling.points.map((p) => (
            <tr key={p.threads} className={p.valid ? undefined : 'row-invalid'} data-valid={p.valid}>
              <th scope="row" className="num">
                {p.threads}
              </th>
              <td className="num">{formatNumber(p.elapsed_s)}</td>
              <td className="num">{formatNumber(p.elapsed_min_s)}</td>
              <td className="num">{formatNumber(p.speedup, 3)}</td>
              <td className="num">
                {formatPercent(p.efficiency)}
                {p.valid ? null : <span className="text-bad"> (not valid: see the row above)</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
