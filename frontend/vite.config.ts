/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Dev server proxies /api to the FastAPI backend so the browser sees one origin, as in production
// (FastAPI serves dist/ at / and the API under /api). SSE needs the proxy to stream, not buffer.
const apiTarget = `http://127.0.0.1:${process.env.HOSTBENCH_PORT ?? '8000'}`;
const proxy = { '/api': { target: apiTarget, changeOrigin: false } };

export default defineConfig({
  plugins: [react()],
  server: { proxy },
  preview: { proxy },
  build: { outDir: 'dist', sourcemap: true, chunkSizeWarningLimit: 800 },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
    restoreMocks: true,
    // user-event tests type key by key; on a loaded CI machine 5 s is not a bound on correctness.
    testTimeout: 20_000,
  },
});
