// A run's files, as the command line writes them: `--junit FILE` and `--json`
// rendered by conformance/reports/ (no second writer), named after the box
// (the CLI leaves the name to its user; the README's example is conformance.xml).
import type { SuiteReport } from '../../conformance/case-result.js';
import { renderJson } from '../../conformance/reports/json.js';
import { renderJunit } from '../../conformance/reports/junit.js';

export interface RunFile {
  readonly filename: string;
  readonly text: string;
}

export function junitFile(moduleId: number, report: SuiteReport): RunFile {
  return { filename: `conformance-${moduleId}.xml`, text: renderJunit(report) };
}

export function jsonFile(moduleId: number, report: SuiteReport): RunFile {
  return { filename: `conformance-${moduleId}.json`, text: renderJson(report) };
}
