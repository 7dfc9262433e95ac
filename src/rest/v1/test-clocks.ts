import { Type } from '@sinclair/typebox';
import { MAX_ADVANCE_SECONDS } from '../../domain/sandbox/test-clock-service.js';
import { defineRoutes } from '../route.js';
import { DateTimeString } from '../schemas.js';

const CLOCK_FIELDS = 'id name now offsetSeconds attached status createdAt';

const TestClockSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    now: DateTimeString,
    offsetSeconds: Type.Integer({ description: 'How far ahead of the wall clock it runs.' }),
    attached: Type.Boolean({ description: "Whether it is the sandbox account's time now." }),
    status: Type.Union([Type.Literal('READY'), Type.Literal('ADVANCING')]),
    createdAt: DateTimeString,
  },
  { title: 'TestClock' },
);

const IdParam = Type.Object({ id: Type.String() });
const SEE = 'Sandbox only: a production key is refused with 403. See docs/sandbox.md#test-clocks.';

export const testClockRoutes = defineRoutes([
  {
    method: 'POST',
    path: '/api/v1/sandbox/test-clocks',
    tag: 'Sandbox',
    summary: 'Create a test clock',
    description: `A clock at the wall clock's time, not attached yet. ${SEE}`,
    operation: `mutation CreateTestClock($name: String) { createTestClock(name: $name) { ${CLOCK_FIELDS} } }`,
    body: Type.Object({
      name: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          examples: ['Daily airtime schedule'],
          description: 'Default "Test clock".',
        }),
      ),
    }),
    variables: ({ body }) => ({ name: (body as { name?: string }).name }),
    message: 'Test clock created successfully',
    response: TestClockSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/sandbox/test-clocks',
    tag: 'Sandbox',
    summary: 'List test clocks',
    description: `The caller's test clocks, oldest first. ${SEE}`,
    operation: `query TestClocks { testClocks { ${CLOCK_FIELDS} } }`,
    message: 'Test clocks retrieved successfully',
    response: Type.Array(TestClockSchema),
  },
  {
    method: 'GET',
    path: '/api/v1/sandbox/test-clocks/:id',
    tag: 'Sandbox',
    summary: 'Retrieve a test clock',
    description: SEE,
    operation: `query TestClock($id: ID!) { testClock(id: $id) { ${CLOCK_FIELDS} } }`,
    params: IdParam,
    message: 'Test clock retrieved successfully',
    response: TestClockSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/test-clocks/:id/attach',
    tag: 'Sandbox',
    summary: 'Attach a test clock to the sandbox account',
    description: `The clock becomes the sandbox account's time. Jobs queued before keep the wall clock, but for webhook deliveries, which its advances reach. One attached clock per account (409). ${SEE}`,
    operation: `mutation AttachTestClock($id: ID!) { attachTestClock(id: $id) { ${CLOCK_FIELDS} } }`,
    params: IdParam,
    status: 200,
    message: 'Test clock attached successfully',
    response: TestClockSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/test-clocks/:id/detach',
    tag: 'Sandbox',
    summary: 'Detach a test clock',
    description: `The sandbox account goes back to the wall clock; what the clock scheduled keeps its due times. ${SEE}`,
    operation: `mutation DetachTestClock($id: ID!) { detachTestClock(id: $id) { ${CLOCK_FIELDS} } }`,
    params: IdParam,
    status: 200,
    message: 'Test clock detached successfully',
    response: TestClockSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/sandbox/test-clocks/:id/advance',
    tag: 'Sandbox',
    summary: 'Advance a test clock',
    description: `Moves an attached clock forward by \`seconds\` and answers once the account's work that fell due on the way has run, each job at its own time on the clock (bill schedules, webhook retries, expiries, offramp steps). Needs the job runner (WORKERS=true). One advance of a clock at a time (409). ${SEE}`,
    operation: `mutation AdvanceTestClock($id: ID!, $seconds: Int!) { advanceTestClock(id: $id, seconds: $seconds) { clock { ${CLOCK_FIELDS} } steps jobsRun jobsStillDue } }`,
    params: IdParam,
    body: Type.Object({
      seconds: Type.Integer({ minimum: 1, maximum: MAX_ADVANCE_SECONDS, examples: [86_400], description: 'How far.' }),
    }),
    variables: ({ params, body }) => ({ id: params.id, seconds: (body as { seconds: number }).seconds }),
    status: 200,
    message: 'Test clock advanced successfully',
    response: Type.Object(
      {
        clock: TestClockSchema,
        steps: Type.Integer({ description: "Due moments walked: each a jump to the next job's due time." }),
        jobsRun: Type.Integer({ description: 'Job runs awaited.' }),
        jobsStillDue: Type.Integer({
          description: 'Jobs due by the new time not run when it answered (0 unless it ran out of time, 30 s).',
        }),
      },
      { title: 'TestClockAdvance' },
    ),
  },
  {
    method: 'DELETE',
    path: '/api/v1/sandbox/test-clocks/:id',
    tag: 'Sandbox',
    summary: 'Delete a test clock',
    description: `Detaches and deletes the clock. ${SEE}`,
    operation: `mutation DeleteTestClock($id: ID!) { deleteTestClock(id: $id) { ${CLOCK_FIELDS} } }`,
    params: IdParam,
    message: 'Test clock deleted successfully',
    response: TestClockSchema,
  },
]);
