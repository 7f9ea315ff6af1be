// Package schedule runs an instance's scheduled functions: the built-in
// ScheduledFunction records (Hypi's shape) name a Query or Mutation field
// bound to a function (fn), when to start and end, and how often to run
// (interval × intervalFrequency, or once when repeats is false). The
// Service calls the field at each due time with the record's id, arcql and
// type as arguments (those the field declares), and writes the outcome on
// the record: lastExecuted, lastExecutionSucceeded, lastExecutionError and
// nextExecution.
//
// What the issue leaves open, decided here:
//   - interval is one of Intervals: MINUTE, HOUR, DAY, WEEK, MONTH, YEAR
//     (start + n × intervalFrequency units), and MONTH_END and YEAR_END
//     (the last day of the month, of the year, at start's time of day,
//     every intervalFrequency months, years). Absent: DAY.
//     intervalFrequency absent is 1; below 1 is refused on write, so the
//     shortest interval is one minute.
//   - repeats absent is true. end absent: no end. start absent: the time
//     of the write. A schedule whose start is in the past runs at the first
//     tick of its grid (start + k intervals) not before the write.
//   - nextExecution is the service's: computed on every write that gives
//     fn, start, end, repeats, interval or intervalFrequency, and after
//     each run; null once the schedule is over. lastExecuted,
//     lastExecutionSucceeded and lastExecutionError are the service's too:
//     a client's write of any of the four is refused.
//   - ScheduledFunction records are written with the instance token only
//     (as EventHook), and run as the instance's admin account (the account
//     the instance token acts as), with a session the function may call
//     back with: a user could otherwise make a schedule run as someone else.
//   - An instance has at most MaxSchedules schedules: a write creating one
//     more is refused (concurrent creations may pass the bound by a few;
//     the service runs the first MaxSchedules by id only).
//   - A missed tick (the service was down) runs once, when the service is
//     back: the next one is the first tick of the grid after that run.
//
// Exactly once: a tick is claimed before it runs by creating a document
// keyed by the schedule and the tick's time (store.CreateDoc stores the
// first of concurrent creations only, so one process of those sharing a
// MongoDB wins each tick); the winner then moves nextExecution on, runs
// the function and writes the outcome. A process that dies after its
// claim leaves the tick unrun (at most once) and the schedule at that
// tick: another process, seeing the claim older than Config.Stale, moves
// nextExecution on, so the next tick runs. Claims of older ticks are
// removed as newer ones are made.
//
// Runs go through the same path as a GraphQL call of the field (Runner,
// gql.Engine.RunScheduled): they count against the instance's function
// quota and obey its function memory, time and concurrency limits; their
// failures are in the instance's function log.
package schedule
