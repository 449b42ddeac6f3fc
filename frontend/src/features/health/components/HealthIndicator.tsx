import { errorMessage } from '../../../lib/api/errors';
import { useHealth } from '../api/get-health';

export function HealthIndicator() {
  const { data, error, isPending } = useHealth();
  let tone = 'muted';
  let text = 'checking…';
  let detail = '';
  if (error) {
    tone = 'bad';
    text = 'API unreachable';
    detail = errorMessage(error);
  } else if (data) {
    const ok = data.status === 'ok';
    tone = ok ? 'ok' : 'warn';
    text = `${ok ? 'healthy' : 'degraded'} · ${data.runners_online} runner${data.runners_online === 1 ? '' : 's'} online`;
    detail = `database: ${data.database}; broker: ${data.broker}; version ${data.version}`;
  }
  return (
    <div className={`health health-${tone}`} role="status" aria-label="System health" title={detail}>
      <span className="dot" aria-hidden="true" />
      <span className="health-text">{isPending && !error ? 'checking…' : text}</span>
      {data && data.status !== 'ok' ? (
        <span className="health-detail small">
          {data.database !== 'ok' ? ` database: ${data.database}` : ''}
          {data.broker !== 'ok' ? ` broker: ${data.broker}` : ''}
        </span>
      ) : null}
    </div>
  );
}
