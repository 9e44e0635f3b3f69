/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// `npm run dev` proxies the API to a `tutorflow serve` on 8787.
const api = ['/threads', '/courses', '/me', '/transcribe', '/dev', '/config.json'];

export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    reportCompressedSize: false,
  },
  // Tests mount components in jsdom: Svelte's browser build.
  resolve: mode === 'test' ? { conditions: ['browser'] } : {},
  server: {
    proxy: Object.fromEntries(api.map((p) => [p, 'http://127.0.0.1:8787'])),
  },
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.ts'],
  },
}));
