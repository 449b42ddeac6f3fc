import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpuExperiment, cpuTraceExperiment, diskExperiment, memoryExperiment, networkPairExperiment, run } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { NewJobForm } from './NewJobForm';

const hosts = [{ id: 1, name: 'bench-a', online: true }];

function setup(fetchImpl?: (req: Request) => Promise<Response>) {
  const fetchMock = vi.fn(fetchImpl ?? (async () => jsonResponse({ id: 1, created_at: '', experiment: 'cpu', runs: [run()] }, 201)));
  vi.stubGlobal('fetch', fetchMock);
  const onCreated = vi.fn();
  renderWithProviders(<NewJobForm hosts={hosts} experiments={[cpuExperiment, cpuTraceExperiment, diskExperiment, memoryExperiment]} onCreated={onCreated} />);
  return { fetchMock, onCreated, user: userEvent.setup() };
}

afterEach(() => vi.unstubAllGlobals());

/** The jobs the form created (the server's estimate is asked as the person types; a job only on submit). */
function jobPosts(fetchMock: { mock: { calls: unknown[][] } }): Request[] {
  return fetchMock.mock.calls.map((c) => c[0] as Request).filter((r) => r instanceof Request && r.url.endsWith('/api/jobs'));
}

describe('NewJobForm (generated from the experiment schema)', () => {
  it('pre-fills defaults, shows help text, and estimates the duration', () => {
    setup();
    expect(screen.getByLabelText(/bench-a/)).toBeChecked();
    expect(screen.getByLabelText('Experiment')).toHaveValue('cpu');
    // the op a job may give a list of: checkboxes, the default ticked
    const ops = screen.getByRole('group', { name: 'Operations' });
    expect(within(ops).getByRole('checkbox', { name: 'FP64 FLOPS' })).toBeChecked();
    expect(within(ops).getByRole('checkbox', { name: 'FP32 FLOPS' })).not.toBeChecked();
    expect(screen.getByLabelText('Threads')).toHaveValue('1, 2, 4, 8');
    expect(screen.getByLabelText('Repeats')).toHaveValue(3);
    expect(screen.getByLabelText('Duration (s)')).toHaveValue(5);
    expect(screen.getByLabelText('Warm-up (s)')).toHaveValue(1);
    expect(screen.getByLabelText('Repeats')).toHaveAccessibleDescription(/How many times each configuration is measured.*allowed 1 – 100/);
    // 4 thread counts × (1 s warm-up + 3 × 5 s)
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 1 min 4 s');
  });

  it('shows the server estimate (the one model) with or without reference tools, the cap apart', async () => {
    const noTools = { typical_s: 66, cap_s: 64, references: [] };
    const estimate = {
      typical_s: 358, cap_s: 1264,
      references: [
        { tool: 'hpcc', what: 'HPL N = 4,032, 1 process', typical_s: 37.1 },
        { tool: 'likwid-bench', what: 'likwid-bench peakflops_avx512_fma, 1 threads', typical_s: 7 },
      ],
    };
    const fetchMock = vi.fn(async (req: Request) => {
      if (!req.url.endsWith('/api/jobs/estimate')) return jsonResponse({ id: 1, created_at: '', experiment: 'cpu', runs: [run()] }, 201);
      const body = (await req.clone().json()) as { params: { reference?: boolean } };
      return jsonResponse(body.params.reference ? estimate : noTools);
    });
    vi.stubGlobal('fetch', fetchMock);
    const props = cpuExperiment.parameters.properties as Record<string, unknown>;
    const withReference = {
      ...cpuExperiment,
      parameters: { ...cpuExperiment.parameters, properties: { ...props, reference: { default: false, type: 'boolean', title: 'Reference' } } },
    };
    renderWithProviders(<NewJobForm hosts={hosts} experiments={[withReference]} onCreated={vi.fn()} />);
    const user = userEvent.setup();
    // no tools: the server's figure all the same (no allowance, no reference words), and its cap
    await waitFor(() => expect(screen.getByText(/Estimated duration/)).toHaveTextContent('about 1 min 6 s'));
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('cap 1 min 4 s, the run\'s limit');
    expect(screen.getByText(/Estimated duration/)).not.toHaveTextContent(/reference/);
    const first = fetchMock.mock.calls[0]?.[0] as Request;
    expect(first.url).toMatch(/\/api\/jobs\/estimate$/);
    expect(await first.clone().json()).toMatchObject({ experiment: 'cpu', host_ids: [1], params: {} });
    await user.click(screen.getByLabelText('Also run the reference tools'));
    await waitFor(() => expect(screen.getByText(/Estimated duration/)).toHaveTextContent('about 5 min 58 s'));
    const line = screen.getByText(/Estimated duration/);
    expect(line).toHaveTextContent('measuring 1 min 4 s, then 2 reference runs: HPL N = 4,032, 1 process ~37 s; likwid-bench');
    expect(line).toHaveTextContent('cap 21 min 4 s, the run\'s limit');
    const sent = fetchMock.mock.calls.map((c) => c[0] as Request).filter((r) => r.url.endsWith('/api/jobs/estimate')).at(-1);
    expect(await sent?.clone().json()).toMatchObject({ experiment: 'cpu', host_ids: [1], params: { reference: true } });
    expect(jobPosts(fetchMock)).toEqual([]);
  });

  it('switches to cpu_trace and regenerates the form', async () => {
    const { user } = setup();
    await user.selectOptions(screen.getByLabelText('Experiment'), 'cpu_trace');
    expect(screen.getByLabelText('Threads')).toHaveValue(1);
    expect(screen.queryByLabelText('Repeats')).not.toBeInTheDocument();
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('10 min');
  });

  it('explains an out-of-bounds value next to its field and does not submit', async () => {
    const { user, fetchMock } = setup();
    const repeats = screen.getByLabelText('Repeats');
    await user.clear(repeats);
    await user.type(repeats, '0');
    expect(repeats).toHaveAttribute('aria-invalid', 'true');
    expect(repeats).toHaveAccessibleDescription(/0 is out of range: allowed 1 – 100/);
    const threads = screen.getByLabelText('Threads');
    await user.clear(threads);
    await user.type(threads, '1, 300');
    expect(threads).toHaveAccessibleDescription(/300 is out of range: allowed 1 – 256/);
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    expect(jobPosts(fetchMock)).toEqual([]);
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('—');
  });

  it('sends the params the person changed, and reports the created job', async () => {
    const { user, fetchMock, onCreated } = setup();
    await user.clear(screen.getByLabelText('Threads'));
    await user.type(screen.getByLabelText('Threads'), '1');
    await user.clear(screen.getByLabelText('Repeats'));
    await user.type(screen.getByLabelText('Repeats'), '1');
    await user.clear(screen.getByLabelText('Duration (s)'));
    await user.type(screen.getByLabelText('Duration (s)'), '3');
    await user.clear(screen.getByLabelText('Warm-up (s)'));
    await user.type(screen.getByLabelText('Warm-up (s)'), '0');
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('3 s');
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(onCreated).toHaveBeenCalled());
    const req = jobPosts(fetchMock)[0] as Request;
    expect(req.method).toBe('POST');
    expect(new URL(req.url).pathname).toBe('/api/jobs');
    // op was left at its default: not sent, the server applies its own
    expect(await req.json()).toEqual({
      host_ids: [1],
      experiment: 'cpu',
      params: { threads: [1], repeats: 1, duration_s: 3, warmup_s: 0 },
    });
    expect(onCreated.mock.calls[0]?.[0].runs[0].id).toBe(7);
  });

  it('sends no params at all for a form left as it was', async () => {
    const { user, fetchMock } = setup();
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(await (jobPosts(fetchMock)[0] as Request).json()).toEqual({ host_ids: [1], experiment: 'cpu', params: {} });
  });

  it('shows a server 422 next to the field named by loc, and clears it on edit', async () => {
    const { user } = setup(async () =>
      jsonResponse(
        {
          detail: [
            { loc: ['body', 'cpu', 'params', 'duration_s'], msg: 'Input should be less than or equal to 3600', type: 'less_than_equal' },
            { loc: ['body'], msg: 'runner on host 1 cannot run cpu', type: 'value_error' },
          ],
        },
        422,
      ),
    );
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    const duration = screen.getByLabelText('Duration (s)');
    await waitFor(() => expect(duration).toHaveAccessibleDescription(/Input should be less than or equal to 3600/));
    expect(duration).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByRole('alert')).toHaveTextContent('runner on host 1 cannot run cpu');
    await user.type(duration, '0');
    expect(duration).not.toHaveAccessibleDescription(/less than or equal to 3600/);
  });

  it('asks for a host when none is picked', async () => {
    const { user, fetchMock } = setup();
    await user.click(screen.getByLabelText(/bench-a/));
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    expect(screen.getByText('Pick at least one host')).toBeInTheDocument();
    expect(jobPosts(fetchMock)).toEqual([]);
  });

  it('disk: operations as checkboxes, block sizes in binary units, and a typed request', async () => {
    const { user, fetchMock } = setup();
    await user.selectOptions(screen.getByLabelText('Experiment'), 'disk');
    const ops = screen.getByRole('group', { name: 'Operations' });
    expect(within(ops).getAllByRole('checkbox', { checked: true })).toHaveLength(5);
    await user.click(within(ops).getByRole('checkbox', { name: 'Mixed read/write 50/50' }));
    await user.click(within(ops).getByRole('checkbox', { name: 'Sequential write' }));
    await user.click(within(ops).getByRole('checkbox', { name: 'Random write' }));
    await user.click(within(ops).getByRole('checkbox', { name: 'Random read' }));
    const blocks = screen.getByLabelText('Block sizes');
    expect(blocks).toHaveValue('8 B, 8 KiB, 8 MiB, 80 MiB');
    await user.clear(blocks);
    await user.type(blocks, '4 KiB, 1 MiB');
    await user.clear(screen.getByLabelText('Threads'));
    await user.type(screen.getByLabelText('Threads'), '1');
    // 1 op × 2 blocks × 1 thread count × (1 s warm-up + 3 × 3 s)
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('20 s');
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(await (jobPosts(fetchMock)[0] as Request).json()).toEqual({
      host_ids: [1],
      experiment: 'disk',
      params: { ops: ['seq_read'], blocks: [4096, 1048576], threads: [1] },
    });
  });

  it('disk: refuses an empty operation list in place', async () => {
    const { user, fetchMock } = setup();
    await user.selectOptions(screen.getByLabelText('Experiment'), 'disk');
    for (const box of within(screen.getByRole('group', { name: 'Operations' })).getAllByRole('checkbox')) await user.click(box);
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    expect(screen.getByRole('group', { name: 'Operations' })).toHaveAccessibleDescription(/Required/);
    expect(jobPosts(fetchMock)).toEqual([]);
  });

  it("never shows the server's estimate of the parameters before the change as the estimate of the new ones", async () => {
    const noTools = { typical_s: 66, cap_s: 64, references: [] };
    let answer: (r: Response) => void = () => {};
    const fetchMock = vi.fn(async (req: Request) => {
      const body = (await req.clone().json()) as { params: { reference?: boolean } };
      if (!body.params.reference) return jsonResponse(noTools);
      return new Promise<Response>((resolve) => { answer = resolve; }); // the new answer is on its way
    });
    vi.stubGlobal('fetch', fetchMock);
    const props = cpuExperiment.parameters.properties as Record<string, unknown>;
    const withReference = {
      ...cpuExperiment,
      parameters: { ...cpuExperiment.parameters, properties: { ...props, reference: { default: false, type: 'boolean', title: 'Reference' } } },
    };
    renderWithProviders(<NewJobForm hosts={hosts} experiments={[withReference]} onCreated={vi.fn()} />);
    await waitFor(() => expect(screen.getByText(/Estimated duration/)).toHaveTextContent('cap 1 min 4 s'));
    await userEvent.setup().click(screen.getByLabelText('Also run the reference tools'));
    await waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    // until the server answers for these parameters: the measuring time from the published terms, no cap
    expect(screen.getByText(/Estimated duration/)).not.toHaveTextContent(/cap|about 1 min 6 s/);
    answer(jsonResponse({ typical_s: 358, cap_s: 1264, references: [] }));
    await waitFor(() => expect(screen.getByText(/Estimated duration/)).toHaveTextContent('cap 21 min 4 s'));
  });

  it('estimates a range when repeating until stable', async () => {
    const withStable = {
      ...cpuExperiment,
      parameters: {
        ...(cpuExperiment.parameters as object),
        properties: {
          ...((cpuExperiment.parameters as { properties: object }).properties),
          stable_cv: { default: 0, maximum: 0.5, minimum: 0, type: 'number', description: 'Repeat until stable' },
          max_repeats: { default: 10, maximum: 1000, minimum: 1, type: 'integer' },
        },
      },
    };
    vi.stubGlobal('fetch', vi.fn());
    const user = userEvent.setup();
    renderWithProviders(<NewJobForm hosts={hosts} experiments={[withStable]} onCreated={vi.fn()} />);
    // 4 thread counts × (1 s + 3 × 5 s)
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 1 min 4 s');
    await user.clear(screen.getByLabelText('Repeat until CV ≤ (0 = off)'));
    await user.type(screen.getByLabelText('Repeat until CV ≤ (0 = off)'), '0.03');
    // up to 4 × (1 s + 10 × 5 s)
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 1 min 4 s – 3 min 24 s (repeating until stable)');
  });

  it('memory: asks for block sizes or working-set sizes as the op chosen takes them (the published applies)', async () => {
    const { user, fetchMock } = setup();
    await user.selectOptions(screen.getByLabelText('Experiment'), 'memory');
    const ops = screen.getByRole('group', { name: 'Operations' });
    const only = async (name: string) => {
      for (const box of within(ops).getAllByRole('checkbox', { checked: true })) await user.click(box);
      await user.click(within(ops).getByRole('checkbox', { name }));
    };
    expect(screen.getByLabelText('Block sizes')).toBeInTheDocument();
    expect(screen.queryByLabelText('Working-set sizes')).not.toBeInTheDocument();
    // 3 blocks × 2 thread counts × (1 s + 3 × 3 s)
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 1 min');
    await only('STREAM Triad');
    expect(screen.queryByLabelText('Block sizes')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Working-set sizes')).not.toBeInTheDocument();
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 20 s');
    await only('Load latency');
    expect(screen.queryByLabelText('Block sizes')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Working-set sizes')).toBeInTheDocument();
    // 6 sizes × 2 thread counts × 10 s
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 2 min');
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(await (jobPosts(fetchMock)[0] as Request).json()).toEqual({ host_ids: [1], experiment: 'memory', params: { op: 'latency' } });
  });

  it('several ops ticked: one run each, sent as a list; the fields of any of them are asked for', async () => {
    const { user, fetchMock } = setup();
    await user.click(within(screen.getByRole('group', { name: 'Operations' })).getByRole('checkbox', { name: 'Integer ops (INT32)' }));
    // two runs of 4 thread counts × (1 s warm-up + 3 × 5 s)
    expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 2 min 8 s');
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(jobPosts(fetchMock)).toHaveLength(1));
    expect(await (jobPosts(fetchMock)[0] as Request).json()).toEqual({ host_ids: [1], experiment: 'cpu', params: { op: ['fp64', 'int32'] } });

    await user.selectOptions(screen.getByLabelText('Experiment'), 'memory');
    await user.click(within(screen.getByRole('group', { name: 'Operations' })).getByRole('checkbox', { name: 'Load latency' }));
    // copy takes block sizes, latency working-set sizes: both are asked for
    expect(screen.getByLabelText('Block sizes')).toBeInTheDocument();
    expect(screen.getByLabelText('Working-set sizes')).toBeInTheDocument();
  });

  it('switching to the two-host experiment keeps the host already ticked, as the one that serves', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => jsonResponse({ typical_s: 1, cap_s: 1, references: [] })));
    const two = [
      { id: 1, name: 'bench-a', online: true },
      { id: 2, name: 'bench-b', online: true },
    ];
    renderWithProviders(<NewJobForm hosts={two} experiments={[cpuExperiment, networkPairExperiment]} onCreated={vi.fn()} />);
    const user = userEvent.setup();
    await user.click(screen.getByRole('checkbox', { name: /^bench-b/ }));
    await user.selectOptions(screen.getByLabelText('Experiment'), 'network_pair');
    expect(screen.getByRole('checkbox', { name: /^bench-b/ })).toBeChecked();
    expect(screen.getByRole('note', { name: 'Host roles' })).toHaveTextContent('bench-b serves; pick the host that drives');
    await user.selectOptions(screen.getByLabelText('Experiment'), 'cpu');
    expect(screen.getByRole('checkbox', { name: /^bench-b/ })).toBeChecked();
  });

  it('a GPU job on a host whose inventory lists no GPU: said at once next to the hosts, and not sent', async () => {
    const fetchMock = vi.fn(async () => jsonResponse({ typical_s: 1, cap_s: 1, references: [] }));
    vi.stubGlobal('fetch', fetchMock);
    const gpu = { ...cpuExperiment, kind: 'gpu', title: 'GPU (CUDA)', needs_gpu: true };
    const fleet = [
      { id: 1, name: 'bench-a', online: true, gpus: 0 },
      { id: 2, name: 'bench-g', online: true, gpus: 2 },
    ];
    renderWithProviders(<NewJobForm hosts={fleet} experiments={[cpuExperiment, gpu]} onCreated={vi.fn()} />);
    const user = userEvent.setup();
    await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
    expect(screen.queryByText(/has no GPU/)).not.toBeInTheDocument(); // a CPU job runs anywhere
    await user.selectOptions(screen.getByLabelText('Experiment'), 'gpu');
    expect(screen.getByText('bench-a has no GPU (its inventory lists none): a GPU job cannot run there; pick a host with one')).toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: /^bench-a/ })).toHaveAccessibleName(/no GPU$/);
    await user.click(screen.getByRole('button', { name: 'Start run' }));
    expect(jobPosts(fetchMock)).toEqual([]);
    await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
    await user.click(screen.getByRole('checkbox', { name: /^bench-g/ }));
    expect(screen.queryByText(/has no GPU/)).not.toBeInTheDocument();
  });

  describe('network between two hosts', () => {
    const three = [
      { id: 1, name: 'bench-a', online: true },
      { id: 2, name: 'bench-b', online: true },
      { id: 3, name: 'bench-c', online: true },
    ];
    function setupPair() {
      const fetchMock = vi.fn(async (_req: Request) => jsonResponse({ id: 1, created_at: '', experiment: 'network_pair', runs: [run()] }, 201));
      vi.stubGlobal('fetch', fetchMock);
      const onCreated = vi.fn();
      renderWithProviders(<NewJobForm hosts={three} experiments={[networkPairExperiment]} onCreated={onCreated} />);
      return { fetchMock, onCreated, user: userEvent.setup() };
    }

    it('says the first host picked serves and the second drives, and sends them in that order', async () => {
      const { user, fetchMock, onCreated } = setupPair();
      const roles = screen.getByRole('note', { name: 'Host roles' });
      expect(roles).toHaveTextContent('Pick the host that serves first, then the host that drives');
      await user.click(screen.getByRole('checkbox', { name: /^bench-c/ }));
      expect(roles).toHaveTextContent('bench-c serves; pick the host that drives');
      await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
      expect(roles).toHaveTextContent('bench-c serves (listens on a port it chooses); bench-a drives (connects to it and measures).');
      expect(screen.getByRole('checkbox', { name: /^bench-c/ })).toHaveAccessibleName(/serves$/);
      expect(screen.getByRole('checkbox', { name: /^bench-a/ })).toHaveAccessibleName(/drives$/);
      expect(screen.getByText(/Estimated duration/)).toHaveTextContent('Estimated duration: 2 s');
      await user.click(screen.getByRole('button', { name: 'Start run' }));
      await waitFor(() => expect(onCreated).toHaveBeenCalled());
      const req = jobPosts(fetchMock)[0] as Request;
      expect((await req.json()).host_ids).toEqual([3, 1]);
    });

    it('UDP with the default sizes sends no sizes (the server brings its default within UDP\'s limit)', async () => {
      const { user, fetchMock, onCreated } = setupPair();
      await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
      await user.click(screen.getByRole('checkbox', { name: /^bench-b/ }));
      await user.selectOptions(screen.getByLabelText('Operation'), 'udp_stream');
      expect(screen.getByLabelText('Message sizes')).toHaveValue('64 KiB');
      await user.click(screen.getByRole('button', { name: 'Start run' }));
      await waitFor(() => expect(onCreated).toHaveBeenCalled());
      expect(await (jobPosts(fetchMock)[0] as Request).json()).toEqual({ host_ids: [1, 2], experiment: 'network_pair', params: { op: 'udp_stream' } });
    });

    it("shows the kernel's rule refusing a size next to Message sizes, and clears it when sizes change", async () => {
      const { user, fetchMock } = setupPair();
      fetchMock.mockImplementation(async () =>
        jsonResponse(
          {
            detail: [
              {
                loc: ['body', 'network_pair', 'params', 'sizes'],
                msg: 'udp_stream: a datagram carries at most 65507 bytes',
                type: 'kernel_rule',
                input: 65536,
              },
            ],
          },
          422,
        ),
      );
      await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
      await user.click(screen.getByRole('checkbox', { name: /^bench-b/ }));
      await user.selectOptions(screen.getByLabelText('Operation'), 'udp_stream');
      const sizes = screen.getByLabelText('Message sizes');
      await user.clear(sizes);
      await user.type(sizes, '65536');
      await user.click(screen.getByRole('button', { name: 'Start run' }));
      await waitFor(() => expect(sizes).toHaveAccessibleDescription(/a datagram carries at most 65507 bytes/));
      expect(sizes).toHaveAttribute('aria-invalid', 'true');
      expect(screen.queryByRole('alert')).not.toBeInTheDocument();
      await user.clear(sizes);
      await user.type(sizes, '1400');
      expect(sizes).not.toHaveAccessibleDescription(/65507/);
    });

    it('swaps the roles', async () => {
      const { user } = setupPair();
      await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
      await user.click(screen.getByRole('checkbox', { name: /^bench-b/ }));
      await user.click(screen.getByRole('button', { name: 'Swap roles' }));
      expect(screen.getByRole('note', { name: 'Host roles' })).toHaveTextContent('bench-b serves (listens on a port it chooses); bench-a drives');
    });

    it('refuses one host on submit and three at once, in place', async () => {
      const { user, fetchMock } = setupPair();
      const group = screen.getByRole('group', { name: 'Hosts (two: the first serves, the second drives)' });
      await user.click(screen.getByRole('checkbox', { name: /^bench-a/ }));
      await user.click(screen.getByRole('button', { name: 'Start run' }));
      expect(group).toHaveAccessibleDescription(/Pick exactly two hosts \(1 picked\): the first you pick serves, the second drives/);
      await user.click(screen.getByRole('checkbox', { name: /^bench-b/ }));
      expect(within(group).queryByText(/Pick exactly two hosts/)).not.toBeInTheDocument();
      await user.click(screen.getByRole('checkbox', { name: /^bench-c/ }));
      expect(within(group).getByText(/Pick exactly two hosts \(3 picked\)/)).toBeInTheDocument();
      await user.click(screen.getByRole('button', { name: 'Start run' }));
      expect(jobPosts(fetchMock)).toEqual([]);
    });
  });
});
