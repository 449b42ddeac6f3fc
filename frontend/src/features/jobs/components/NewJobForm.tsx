// New job: hosts, experiment, and that experiment's generated parameter form. Client-side checks use
// the schema's own bounds and show in place as the person types; a 422 from the server lands next
// to the field its `loc` names. On success the caller navigates to the run that measures. A two-host
// experiment (roles serve, drive) takes exactly two hosts in the order picked: the first serves, the second
// drives. Only the parameters the person changed are sent; the server's defaults apply to the rest.
// The state lives in useJobForm; each part of the form is its own component.
import { useJobEstimate } from '../api/estimate-job';
import { useJobForm, type JobFormInput } from '../hooks/use-job-form';
import { FORM_ID as ID, durationEstimate, oversubscription } from '../lib/job-form';
import { DurationEstimate } from './DurationEstimate';
import { ExperimentField } from './ExperimentField';
import { HostPicker } from './HostPicker';
import { ParamsForm } from '../../../components/ParamsForm';

export type { HostOption } from '../lib/job-form';
export type NewJobFormProps = JobFormInput;

export function NewJobForm(props: NewJobFormProps) {
  const form = useJobForm(props);
  const { hosts, experiments } = props;
  const estimate = durationEstimate(form.experiment, form.params, form.valid);
  // The server's estimate, whether or not reference tools are on: one model (their typical time on the hosts
  // picked) and the cap, so this line never disagrees with the run's own estimate or History's cap.
  const withTools = form.params.reference === true;
  const server = useJobEstimate(form.estimateBody);
  const oversubscribed = oversubscription(hosts, form.hostIds, form.params);

  return (
    <form className="card form" onSubmit={form.onSubmit} noValidate aria-label="New job">
      <HostPicker
        hosts={hosts}
        hostIds={form.hostIds}
        pair={form.pair}
        needsGpu={form.experiment?.needs_gpu ?? false}
        error={form.hostsError}
        onToggle={form.toggleHost}
        onSwap={form.swapRoles}
      />

      <ExperimentField
        experiments={experiments}
        kind={form.kind}
        description={form.experiment?.description}
        error={form.experimentError}
        onChange={form.chooseExperiment}
      />

      <fieldset className="fieldset">
        <legend>Parameters</legend>
        <ParamsForm
          fields={form.fields}
          values={form.raw}
          errors={form.shownErrors}
          onChange={form.changeParam}
          onBlur={form.blurParam}
          idPrefix={ID}
        />
      </fieldset>

      <DurationEstimate {...estimate} perHost={form.hostIds.length > 1 && !form.pair} server={server.isPlaceholderData ? undefined : server.data} withTools={withTools} />
      {oversubscribed ? (
        <p className="small" role="note" aria-label="Oversubscribed">
          <span className="badge badge-warn">oversubscribed</span> {oversubscribed}
        </p>
      ) : null}

      {form.server.form.length ? (
        <div className="state state-error" role="alert">
          <p>
            <strong>The server refused the job:</strong> {form.server.form.join('; ')}
          </p>
        </div>
      ) : null}

      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={form.pending}>
          {form.pending ? 'Starting…' : 'Start run'}
        </button>
      </div>
    </form>
  );
}
