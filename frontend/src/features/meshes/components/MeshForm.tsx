// Test hosts together: pick N hosts and a mode (all pairs, both ways, many to one with its server) and the ops.
// Every job is created at once or none, with the server's reason; the page then shows the mesh's matrix.
import { useId, useState } from 'react';
import { HostPicker, type HostOption } from '../../../components/HostPicker';
import { TextField } from '../../../components/TextField';
import { errorMessage } from '../../../lib/api/errors';
import { useStartMesh, type Mesh, type MeshCreate, type MeshMode } from '../api/meshes';
import { MODE_LABELS, roundsFor } from '../lib/heat';

const OPS: { op: MeshCreate['ops'] extends (infer O)[] | undefined ? O : never; label: string }[] = [
  { op: 'tcp_stream', label: 'TCP throughput (Mbit/s)' },
  { op: 'tcp_rr', label: 'TCP round trip (µs)' },
];

export function MeshForm({ hosts, onStarted }: { hosts: readonly HostOption[]; onStarted: (m: Mesh) => void }) {
  const [hostIds, setHostIds] = useState<number[]>([]);
  const [mode, setMode] = useState<MeshMode>('all_pairs');
  const [serverId, setServerId] = useState<number | null>(null);
  const [ops, setOps] = useState<string[]>(['tcp_stream', 'tcp_rr']);
  // Each pair job's timing (the network_pair parameters every job shares); empty: the kernel's default.
  const [timing, setTiming] = useState({ repeats: '', duration_s: '', warmup_s: '' });
  const start = useStartMesh();
  const serverSelect = useId();
  const n = hostIds.length;
  const links = mode === 'many_to_one' ? n : mode === 'all_pairs' ? (n * (n - 1)) / 2 : n * (n - 1);
  const ready = n >= 2 && ops.length > 0 && (mode !== 'many_to_one' || serverId !== null);

  return (
    <form
      className="card"
      aria-label="Test hosts together"
      onSubmit={(e) => {
        e.preventDefault();
        const params = Object.fromEntries(Object.entries(timing).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, Number(v)]));
        const body: MeshCreate = { mode, host_ids: hostIds, ops: ops as MeshCreate['ops'], params };
        if (mode === 'many_to_one' && serverId !== null) body.server_host_id = serverId;
        start.mutate(body, { onSuccess: onStarted });
      }}
    >
      <fieldset className="fieldset">
        <legend>{mode === 'many_to_one' ? 'Clients' : 'Hosts'}</legend>
        <HostPicker hosts={hosts} picked={hostIds} onChange={setHostIds} excluded={serverId} />
      </fieldset>
      <fieldset className="fieldset">
        <legend>Mode</legend>
        {(Object.keys(MODE_LABELS) as MeshMode[]).map((m) => (
          <label key={m} className="check">
            <input type="radio" name="mesh-mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
            {MODE_LABELS[m]}
          </label>
        ))}
        {mode === 'many_to_one' ? (
          <div className="field">
            <label htmlFor={serverSelect}>Server</label>
            <select id={serverSelect} value={serverId ?? ''} onChange={(e) => setServerId(e.target.value ? Number(e.target.value) : null)}>
              <option value="">Pick the host every client drives to</option>
              {hosts
                .filter((h) => !hostIds.includes(h.id))
                .map((h) => (
                  <option key={h.id} value={h.id}>
                    {h.name}
                  </option>
                ))}
            </select>
          </div>
        ) : null}
      </fieldset>
      <fieldset className="fieldset">
        <legend>Measure</legend>
        {OPS.map(({ op, label }) => (
          <label key={op} className="check">
            <input type="checkbox" checked={ops.includes(op)} onChange={(e) => setOps((o) => (e.target.checked ? [...o, op] : o.filter((x) => x !== op)))} />
            {label}
          </label>
        ))}
      </fieldset>
      <fieldset className="fieldset">
        <legend>Each pair job</legend>
        <TextField id={`${serverSelect}-repeats`} label="Repeats" inputMode="numeric" placeholder="3" error={null} value={timing.repeats} onChange={(e) => setTiming({ ...timing, repeats: e.target.value })} />
        <TextField id={`${serverSelect}-duration`} label="Duration per repeat (s)" inputMode="decimal" placeholder="3" error={null} value={timing.duration_s} onChange={(e) => setTiming({ ...timing, duration_s: e.target.value })} />
        <TextField id={`${serverSelect}-warmup`} label="Warm-up (s)" inputMode="decimal" placeholder="1" error={null} value={timing.warmup_s} onChange={(e) => setTiming({ ...timing, warmup_s: e.target.value })} help="Empty: the network test's defaults. The server checks each value as a job's." />
      </fieldset>
      <p className="help">
        {n >= 2
          ? `${links} ${links === 1 ? 'link' : 'links'} in ${roundsFor(mode, n, ops.length)} ${roundsFor(mode, n, ops.length) === 1 ? 'round' : 'rounds'}: in a round each host serves or drives one pair, never both, and the pairs of a round run at the same time.`
          : 'Pick two hosts or more.'}
      </p>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={!ready || start.isPending}>
          {start.isPending ? 'Starting…' : 'Test together'}
        </button>
      </div>
      {start.isError ? (
        <p className="field-error" role="alert">
          Could not start: {errorMessage(start.error)}
        </p>
      ) : null}
    </form>
  );
}
