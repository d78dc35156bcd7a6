/**
 * The OpenAPI document through two independent linters with their default rulesets, as an
 * integrator's tooling would read it: Redocly (`recommended`) and Spectral (`spectral:oas`).
 * Both must report no error and no warning; a rule turned off says why in its config file
 * (`redocly.yaml`, `.spectral.yaml` at the repository root). Nothing is fetched from the network.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing/harness.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

describe('the OpenAPI document under redocly and spectral', { timeout: 120_000 }, () => {
  let h: Harness;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    h = await createHarness('pglite');
    dir = mkdtempSync(join(tmpdir(), 'kupah-openapi-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify((await h.request('GET', '/openapi.json')).body, null, 2));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lint = async (cmd: string, args: string[]) => {
    try {
      const r = await run(cmd, args, {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      });
      return { code: 0, out: `${r.stdout}${r.stderr}` };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  };

  it('redocly lint (recommended): no error, no warning', async () => {
    const r = await lint(bin('redocly'), [
      'lint',
      file,
      '--config',
      join(ROOT, 'redocly.yaml'),
      '--format',
      'stylish',
    ]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/Woohoo! Your API description is valid/);
    // Warnings do not change redocly's exit code: they are counted in its last line.
    expect(r.out, r.out).not.toMatch(/You have \d+ warnings?/);
  });

  it('spectral lint (spectral:oas): no error, no warning', async () => {
    const r = await lint(bin('spectral'), [
      'lint',
      file,
      '--ruleset',
      join(ROOT, '.spectral.yaml'),
      '--fail-severity',
      'warn',
    ]);
    expect(r.code, r.out).toBe(0);
    expect(r.out, r.out).toMatch(/No results with a severity of 'warn' or higher found|no results/i);
  });
});
