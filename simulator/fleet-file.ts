// A fleet file: a JSON array of provisioning files (what `parkbench admin
// fleet provision` writes), each optionally with a "sim" object of sim/set
// settings for that box (faults, battery, clock).
import { parseSimSet, SimSetError, type SimSetCommand } from '../lib/sim-set.js';
import { parseProvisioning, ProvisioningError, readJsonFile, type Provisioning } from '../lib/provisioning-file.js';

export interface FleetMember {
  readonly provisioning: Provisioning;
  readonly settings: SimSetCommand;
}

export function parseFleet(document: unknown): FleetMember[] {
  if (!Array.isArray(document) || document.length === 0)
    throw new ProvisioningError('', 'a fleet file must be a non-empty JSON array of provisioning objects');
  const seen = new Set<number>();
  return document.map((element: unknown, index) => {
    const where = `[${index}]`;
    const provisioning = parseProvisioning(element, where);
    if (seen.has(provisioning.moduleId))
      throw new ProvisioningError(`${where}.module_id`, `${provisioning.moduleId} appears twice in the fleet`);
    seen.add(provisioning.moduleId);
    const sim = (element as { sim?: unknown }).sim;
    let settings: SimSetCommand = {};
    if (sim !== undefined && sim !== null) {
      try {
        settings = parseSimSet(sim);
      } catch (error) {
        if (error instanceof SimSetError)
          throw new ProvisioningError(`${where}.sim.${error.field}`, error.message.slice(error.field.length + 2));
        throw error;
      }
    }
    return { provisioning, settings };
  });
}

export async function loadFleetFile(path: string): Promise<FleetMember[]> {
  return parseFleet(await readJsonFile(path));
}
