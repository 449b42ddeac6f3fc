// Theoretical peaks as the backend computed them (formula and source shown), and the peaks a person
// enters from a datasheet where the host cannot tell (memory channels, NIC speed) or the computed
// one is wrong. Efficiency of later runs uses these; nothing is computed here.
import { useId, useState, type FormEvent } from 'react';
import { TextField } from '../../../components/TextField';
import { peakLabels } from '../../../config/experiments';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { HostPublic, PeakKey } from '../../../lib/api/types';
import { formatNumber, humanize } from '../../../lib/format';
import { useClearPeakOverride } from '../api/clear-peak-override';
import { useSetPeakOverride } from '../api/set-peak-override';
import { readCpu, readPeaks } from '../lib/inventory';
import { PEAK_KEYS, isPeakKey } from '../lib/peaks';

const label = (key: string) => peakLabels[key] ?? humanize(key);

/** The arithmetic behind a peak, with the factors the host knows filled in: what the person is asked to
 * complete (and what the backend would compute or inferred: its formula, when there is one). */
export function arithmetic(host: HostPublic, key: PeakKey): string | null {
  const cpu = readCpu(host.inventory);
  const current = readPeaks(host).find((p) => p.key === key)?.peak;
  const now = current ? ` Now: ${current.formula}.` : '';
  if (key === 'cpu_fp64' || key === 'cpu_fp32') {
    const cores = cpu.cores !== null ? `${cpu.cores} cores` : 'cores';
    const lanes = key === 'cpu_fp64' ? 'FP64' : 'FP32';
    return `Whole host: ${cores} × clock (GHz) × FLOP per cycle per core (FMA units × ${lanes} lanes of ${cpu.bestIsa ?? 'the widest ISA'} × 2).${now}`;
  }
  if (key === 'memory_bw') return `Channels × MT/s × 8 bytes (e.g. 8 × 4800 × 8 = 307,200 MB/s).${now}`;
  if (key === 'nic_bw') return `The link speed in Mbit/s (e.g. 25,000 for a 25 GbE NIC).${now}`;
  return current ? now.trim() : null;
}

function PeakForm({ host, peakKey, initial, onDone }: { host: HostPublic; peakKey: PeakKey; initial: number | null; onDone: () => void }) {
  const id = useId();
  const [value, setValue] = useState(initial !== null ? String(initial) : '');
  const [note, setNote] = useState('');
  const [touched, setTouched] = useState(false);
  const save = useSetPeakOverride(host.id);
  const n = Number(value);
  const clientError = value.trim() === '' ? 'Enter the peak' : !Number.isFinite(n) || n <= 0 ? 'A positive number' : n > 1e12 ? 'At most 10¹²' : null;
  const serverError = save.error instanceof ApiError && save.error.issues.length ? save.error.issues.map((i) => i.msg).join('; ') : save.isError ? errorMessage(save.error) : null;
  const shown = (touched ? clientError : null) ?? serverError;
  const unit = PEAK_KEYS[peakKey].unit;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (clientError) return;
    save.mutate({ key: peakKey, body: { value: n, note: note.trim() || null } }, { onSuccess: onDone });
  };
  return (
    <form className="peak-form" aria-label={`${label(peakKey)} peak of ${host.name}`} onSubmit={onSubmit} onKeyDown={(e) => e.key === 'Escape' && onDone()} noValidate>
      <TextField
        id={`${id}-value`}
        errorId={`${id}-error`}
        label={`${label(peakKey)} peak (${unit})`}
        error={shown}
        type="number"
        inputMode="decimal"
        min={0}
        step="any"
        value={value}
        autoFocus
        onChange={(e) => setValue(e.target.value)}
        onBlur={() => setTouched(true)}
      />
      {arithmetic(host, peakKey) ? (
        <p className="small muted" id={`${id}-how`}>
          {arithmetic(host, peakKey)}
        </p>
      ) : null}
      <div className="field">
        <label htmlFor={`${id}-note`}>Source (optional)</label>
        <input id={`${id}-note`} type="text" maxLength={500} value={note} placeholder="e.g. datasheet, 8 × DDR5-4800" onChange={(e) => setNote(e.target.value)} />
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary button-small" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save peak'}
        </button>
        <button type="button" className="button button-ghost button-small" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** `canEdit`: the signed-in role may enter or clear peaks (operator or admin). A peak a person entered
 * says who in its formula ("entered by NAME: note"). */
export function PeaksSection({ host, canEdit }: { host: HostPublic; canEdit: boolean }) {
  const peaks = readPeaks(host);
  const [editing, setEditing] = useState<PeakKey | null>(null);
  const clear = useClearPeakOverride(host.id);
  // Keys the host lists nothing for (memory, disk, NIC, GPU until their collectors land).
  const addable = (Object.keys(PEAK_KEYS) as PeakKey[]).filter((k) => !peaks.some((p) => p.key === k));
  const addingNew = editing !== null && addable.includes(editing);

  return (
    <section aria-label="Theoretical peaks" className="peaks">
      <h3 className="small-heading">Theoretical peaks</h3>
      {peaks.length ? (
        <ul>
          {peaks.map(({ key, peak, note }) => (
            <li key={key}>
              <span className="peak-name">{label(key)}</span>{' '}
              {peak ? (
                <>
                  <strong>
                    {formatNumber(peak.value)} {peak.unit}
                  </strong>
                  <span className="muted small formula"> = {peak.formula}</span>
                  <span className={`small ${peak.source === 'inferred' ? 'badge badge-warn' : 'muted'}`}>
                    {peak.source === 'inferred' ? 'inferred' : ` (${peak.source})`}
                  </span>
                  {peak.since ? <span className="muted small"> since {new Date(peak.since).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' })}, for every run of this host</span> : null}
                </>
              ) : (
                <span className="muted small">unknown{note ? `: ${note}` : ''}</span>
              )}
              {canEdit && isPeakKey(key) && editing !== key ? (
                <span className="peak-actions">
                  <button type="button" className="button button-ghost button-small" onClick={() => setEditing(key)} aria-label={`Enter ${label(key)} peak of ${host.name}`}>
                    Enter
                  </button>
                  {peak?.source === 'user' ? (
                    <button type="button" className="button button-ghost button-small" onClick={() => clear.mutate(key)} disabled={clear.isPending} aria-label={`Use the computed ${label(key)} peak of ${host.name}`}>
                      Use computed
                    </button>
                  ) : null}
                </span>
              ) : null}
              {editing === key && isPeakKey(key) ? <PeakForm host={host} peakKey={key} initial={peak?.value ?? null} onDone={() => setEditing(null)} /> : null}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">No peak known yet.</p>
      )}
      {clear.isError ? <p className="field-error">Could not reset the peak: {errorMessage(clear.error)}</p> : null}
      {canEdit && addable.length && !addingNew ? (
        <div className="field field-inline small">
          <label htmlFor={`peak-add-${host.id}`}>Enter another peak</label>
          <select
            id={`peak-add-${host.id}`}
            value=""
            onChange={(e) => {
              if (isPeakKey(e.target.value)) setEditing(e.target.value);
            }}
          >
            <option value="">choose…</option>
            {addable.map((k) => (
              <option key={k} value={k}>
                {label(k)} ({PEAK_KEYS[k].unit})
              </option>
            ))}
          </select>
        </div>
      ) : null}
      {addingNew ? <PeakForm host={host} peakKey={editing} initial={null} onDone={() => setEditing(null)} /> : null}
    </section>
  );
}
