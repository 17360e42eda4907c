// One box: its barrier (animated by CSS), availability, battery, clock drift,
// last seen, link, whether it still takes revoked keys (at-risk.tsx), and
// its buttons, and who holds it (reservation.tsx: the buttons that drive a
// held box are off, with the reason). A class with shouldComponentUpdate so a
// card renders again only when its own box, result or run changed: the store
// keeps unchanged objects as they were (store.ts), so 5,000 cards cost one
// comparison each when one box moves.
import { Component } from 'preact';
import {
  COMMAND_ACTIONS,
  COMMAND_LABELS,
  FAULT_ACTIONS,
  FAULT_LABELS,
  type CommandAction,
  type FaultAction,
} from '../actions';
import { clockTime, drift, volts } from '../format';
import type { ActionResult as Result } from '../store';
import type { Box, Barrier as BarrierState, ConformanceRun } from '../types';
import { BARRIERS } from '../types';
import { ActionResult } from './action-result';
import { AtRisk, AtRiskBadge } from './at-risk';
import { Barrier } from './barrier';
import { heldReason, holds, ReservationLine } from './reservation';

export interface BoxHandlers {
  command: (moduleId: number, action: CommandAction) => void;
  fault: (moduleId: number, action: FaultAction) => void;
  conformance: (moduleId: number) => void;
  /** Downloads the box's recent MQTT traffic as a pcapng file. */
  capture: (moduleId: number) => void;
  /** Opens the box's kept runs (views/runs.tsx). */
  runs: (moduleId: number) => void;
}

interface Props {
  box: Box;
  result: Result | undefined;
  run: ConformanceRun | undefined;
  handlers: BoxHandlers;
  /** Build the body and buttons (false: a large fleet's parking not yet near the viewport, parkings.tsx). */
  near: boolean;
}

/** The card's barrier: the box's live MQTT state, else its last verified response, else closed. */
export function barrierOf(box: Box): BarrierState {
  const candidate = box.live?.barrier ?? box.last_response?.barrier ?? 'closed';
  return (BARRIERS as readonly string[]).includes(candidate) ? candidate : 'closed';
}

function linkOf(box: Box): string {
  if (box.gateway_id !== null) return `gateway ${box.gateway_id}`;
  const via = box.last_response?.via;
  if (via === 'http') return 'phone (HTTP)';
  return 'MQTT';
}

function activeFaults(box: Box): string {
  return (box.live?.faults ?? []).join(', ');
}

/** Whether parkbench's simulator plays the box or it is hardware. */
function BoxKind({ simulated }: { simulated: boolean }) {
  const kind = simulated ? 'simulated' : 'real';
  return (
    <span class="box-kind" data-box-kind={kind}>
      {kind}
    </span>
  );
}

export class BoxCard extends Component<Props> {
  /** Renders the card again when its reservation runs out (a held box's buttons come back on). */
  #expiry: ReturnType<typeof setTimeout> | null = null;

  override componentDidMount(): void {
    this.#watchExpiry();
  }

  override componentDidUpdate(): void {
    this.#watchExpiry();
  }

  override componentWillUnmount(): void {
    if (this.#expiry !== null) clearTimeout(this.#expiry);
  }

  #watchExpiry(): void {
    if (this.#expiry !== null) clearTimeout(this.#expiry);
    this.#expiry = null;
    const reservation = this.props.box.reservation;
    if (!holds(reservation, Date.now())) return;
    const left = Date.parse(reservation.expires_at) - Date.now();
    // setTimeout takes at most 2^31-1 ms; a reservation lasts a day at most.
    if (left > 0 && left < 2 ** 31 - 1) this.#expiry = setTimeout(() => this.forceUpdate(), left + 50);
  }

  override shouldComponentUpdate(next: Props): boolean {
    return (
      next.box !== this.props.box ||
      next.result !== this.props.result ||
      next.run !== this.props.run ||
      next.near !== this.props.near
    );
  }

  render() {
    const { box, result, run, handlers } = this.props;
    const barrier = barrierOf(box);
    const id = box.module_id;
    const faults = activeFaults(box);
    const battery = box.live?.battery_mv ?? box.battery_mv;
    const running = run?.state === 'running';
    const reservation = holds(box.reservation, Date.now()) ? box.reservation : null;
    // The page has no reservation token: a held box refuses what drives it.
    const held = reservation === null ? undefined : heldReason(reservation);
    const missing = box.revocations_missing.length;
    return (
      <article
        class="card"
        data-module-id={id}
        data-barrier={barrier}
        data-availability={box.availability}
        data-revocations-missing={missing}
        data-reserved={reservation === null ? undefined : reservation.holder}
        aria-label={`box ${id}`}
      >
        {/* Not built yet: one line of text (5,000 of these are the first render's DOM). */}
        {!this.props.near && (
          <h3 class="card-head">{`${id} ${box.direction} · ${box.availability}${missing > 0 ? ' · at risk' : ''}`}</h3>
        )}
        {this.props.near && (
          <header class="card-head">
            <h3>
              {id} <span class="direction">{box.direction}</span> <BoxKind simulated={box.simulated} />
            </h3>
            <span class="badges">
              <AtRiskBadge box={box} />
              <span class={`badge ${box.availability}`} title={box.availability_reason ?? undefined}>
                {box.availability}
              </span>
            </span>
          </header>
        )}
        {this.props.near && (
          <>
            <div class="card-body">
              <Barrier state={barrier} />
              <dl class="facts">
                <dt>Barrier</dt>
                <dd class="barrier-name">{barrier}</dd>
                <dt>Battery</dt>
                <dd>{volts(battery)}</dd>
                <dt>Clock drift</dt>
                <dd>{drift(box.box_time_drift_seconds)}</dd>
                <dt>Last seen</dt>
                <dd>{clockTime(box.last_seen_at)}</dd>
                <dt>Link</dt>
                <dd>{linkOf(box)}</dd>
              </dl>
            </div>
            <AtRisk box={box} />
            {box.availability_reason !== null && <p class="reason">{box.availability_reason}</p>}
            {faults !== '' && <p class="faults">Faults: {faults}</p>}
            {reservation !== null && <ReservationLine reservation={reservation} />}
            <div class="buttons">
              {COMMAND_ACTIONS.map((action) => (
                <button
                  type="button"
                  key={action}
                  data-action={action}
                  disabled={held !== undefined}
                  title={held}
                  onClick={() => handlers.command(id, action)}
                >
                  {COMMAND_LABELS[action]}
                </button>
              ))}
              <button
                type="button"
                data-action="conformance"
                disabled={running || held !== undefined}
                title={held}
                onClick={() => handlers.conformance(id)}
              >
                {running ? 'Conformance…' : 'Conformance'}
              </button>
              <button
                type="button"
                data-action="capture"
                title="Download this box's recent MQTT traffic (pcapng, for Wireshark)"
                onClick={() => handlers.capture(id)}
              >
                Capture
              </button>
              <button
                type="button"
                data-action="runs"
                title="This box's kept runs: history, comparison, trend"
                onClick={() => handlers.runs(id)}
              >
                Runs
              </button>
            </div>
            <div class="buttons faults-row" role="group" aria-label={`simulated faults of box ${id}`}>
              {FAULT_ACTIONS.map((action) => (
                <button
                  type="button"
                  key={action}
                  data-action={action}
                  disabled={held !== undefined}
                  title={held}
                  onClick={() => handlers.fault(id, action)}
                >
                  {FAULT_LABELS[action]}
                </button>
              ))}
            </div>
            <ActionResult result={result} />
          </>
        )}
      </article>
    );
  }
}
