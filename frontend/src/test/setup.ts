import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import { chartSpies } from './chart-mock';

// The test files share one jsdom per worker (vite.config.ts: isolate false), so what one file leaves behind is
// cleared before every test: the rendered trees, and the chart stand-in's record of charts.
beforeEach(() => chartSpies.reset());
afterEach(() => cleanup());
