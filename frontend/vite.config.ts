/// <reference types="vitest/config" />
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

// The API pages (/docs: Swagger UI, /redoc: ReDoc) load their scripts from the server, never a CDN: the
// build copies them from npm into dist/api-docs/, which the backend serves (app/web.py api_docs).
const API_DOCS_FILES: [string, string][] = [
  ['swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui-bundle.js'],
  ['swagger-ui-dist/swagger-ui.css', 'swagger-ui.css'],
  ['redoc/bundles/redoc.standalone.js', 'redoc.standalone.js'],
];

function apiDocsAssets(): Plugin {
  let outDir = 'dist';
  return {
    name: 'hostbench-api-docs-assets',
    apply: 'build',
    configResolved(c) {
      outDir = c.build.outDir;
    },
    writeBundle() {
      const dir = join(outDir, 'api-docs');
      mkdirSync(dir, { recursive: true });
      for (const [from, to] of API_DOCS_FILES) copyFileSync(join('node_modules', from), join(dir, to));
    },
  };
}

// Dev server proxies /api to the FastAPI backend so the browser sees one origin, as in production
// (FastAPI serves dist/ at / and the API under /api). SSE needs the proxy to stream, not buffer.
const apiTarget = `http://127.0.0.1:${process.env.HOSTBENCH_PORT ?? '8000'}`;
const proxy = { '/api': { target: apiTarget, changeOrigin: false } };

export default defineConfig({
  plugins: [react(), apiDocsAssets()],
  server: { proxy },
  preview: { proxy },
  build: { outDir: 'dist', sourcemap: true, chunkSizeWarningLimit: 800 },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
    restoreMocks: true,
    clearMocks: true,
    // One jsdom per worker for every file, not one per file: a fresh environment and setup per file cost 120 of
    // the suite's 135 s on a 2-core machine (18 s shared). setup.ts clears what a file leaves behind; a run with
    // --sequence.shuffle checks that no file relies on another's leftovers.
    isolate: false,
    // user-event tests type key by key; on a loaded CI machine 5 s is not a bound on correctness.
    testTimeout: 20_000,
  },
});
