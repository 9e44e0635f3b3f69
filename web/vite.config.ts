/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// `npm run dev` proxies the API to a `tutorflow serve` on 8787.
const api = ['/threads', '/courses', '/me', '/transcribe', '/dev', '/config.json'];

export default defineConfig({
  plugins: [svelte()],
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    reportCompressedSize: false,
  },
  server: {
    proxy: Object.fromEntries(api.map((p) => [p, 'http://127.0.0.1:8787'])),
  },
  test: {
    environment: 'jsdom',
    // Svelte's browser build, so components mount in jsdom.
    alias: [{ find: /^svelte$/, replacement: 'svelte' }],
    include: ['tests/**/*.test.ts'],
  },
});
