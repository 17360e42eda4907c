// Every case, in the order they run. The barrier cycle goes first, while the
// barrier is most likely closed; TIME_SET goes after the window cases so it
// cannot move the clock under them (each learns the clock afresh anyway).
import { accessCases } from './access-cases.js';
import type { ConformanceCase } from './conformance-case.js';
import { controlCases } from './control-cases.js';
import { frameCases } from './frame-cases.js';
import { linkCases } from './link-cases.js';

export const allCases: readonly ConformanceCase[] = [...accessCases, ...frameCases, ...controlCases, ...linkCases];
export type { ConformanceCase };
