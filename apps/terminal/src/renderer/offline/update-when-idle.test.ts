import { afterEach, describe, expect, it } from 'vitest';
import { useTerminal } from '../store/terminal-store.ts';
import { applyWhenIdle, betweenDonations } from './update-when-idle.ts';

describe('a new version is applied only between donations', () => {
  afterEach(() => {
    useTerminal.getState().startOver();
    useTerminal.setState({ screen: 'amount' });
  });

  it('waits while an amount, a donor or a result is on screen; applies once, on the start screen', () => {
    useTerminal.setState({ screen: 'amount' });
    useTerminal.getState().typeAmount('1');
    useTerminal.getState().typeAmount('8');
    let applied = 0;
    applyWhenIdle(useTerminal, () => applied++);
    expect(applied).toBe(0);
    useTerminal.getState().next(); // on to the next step, amount kept
    useTerminal.getState().patchDonor({ firstName: 'Moshe' });
    expect(applied).toBe(0);
    useTerminal.setState({ screen: 'result', waiting: true });
    expect(applied).toBe(0);
    useTerminal.getState().startOver(); // donation finished: the start screen, nothing entered
    expect(applied).toBe(1);
    useTerminal.getState().typeAmount('5');
    useTerminal.getState().startOver();
    expect(applied).toBe(1);
  });

  it('applies at once when the terminal is already idle; a cancelled wait never applies', () => {
    useTerminal.setState({ screen: 'amount' });
    let applied = 0;
    applyWhenIdle(useTerminal, () => applied++);
    expect(applied).toBe(1);
    useTerminal.getState().typeAmount('3');
    const cancel = applyWhenIdle(useTerminal, () => applied++);
    cancel();
    useTerminal.getState().startOver();
    expect(applied).toBe(1);
  });

  it('the settings and queue screens are not "between donations" (staff are at work there)', () => {
    const s = useTerminal.getState();
    expect(betweenDonations({ ...s, screen: 'settings' })).toBe(false);
    expect(betweenDonations({ ...s, screen: 'queue' })).toBe(false);
    expect(betweenDonations({ ...s, screen: 'amount' })).toBe(true);
  });
});
