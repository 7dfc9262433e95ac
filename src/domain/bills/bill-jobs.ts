import type { Job, JobHandler, JobOutcome } from '../jobs/job-runner.js';
import { keepPolling } from '../jobs/polling.js';
import { BILL_JOBS, type BillsService } from './bills-service.js';

/** Settles a PENDING bill (a provider timeout) by asking the provider, every 5 minutes for a day. */
export class BillStatusPollHandler implements JobHandler {
  readonly kind = BILL_JOBS.statusPoll;
  constructor(private readonly bills: BillsService) {}

  async run(job: Job): Promise<JobOutcome> {
    const record = await this.bills.poll(String(job.payload['recordId']));
    // The record's account's time: a sandbox test clock's polls are timed on it.
    return keepPolling(this.bills.clockOf(record), {
      final: record.status !== 'PENDING',
      since: record.createdAt,
      stuck: `Bill ${record.id} is still PENDING after 24 hours; check it with the provider.`,
    });
  }
}

/** One run of a schedule; the run number makes a repeated claim of the same run a no-op. */
export class BillScheduleRunHandler implements JobHandler {
  readonly kind = BILL_JOBS.scheduleRun;
  constructor(private readonly bills: BillsService) {}

  async run(job: Job): Promise<JobOutcome> {
    await this.bills.runSchedule(String(job.payload['scheduleId']), Number(job.payload['run']));
    return { status: 'done' };
  }
}

export const billJobHandlers = (bills: BillsService): JobHandler[] => [
  new BillStatusPollHandler(bills),
  new BillScheduleRunHandler(bills),
];
