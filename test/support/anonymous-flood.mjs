// An anonymous flood, run as a process of its own (node anonymous-flood.mjs <url>
// <connections> <seconds>) so that it does not share an event loop or a thread's CPU
// time with the client under measurement. `connections` connections send unknown tokens
// (one per connection) to POST /plants and as many poll GET /health/ready; the report,
// one JSON line on stdout, counts their answers.
import autocannon from 'autocannon';

const [url, connections, duration] = [
  process.argv[2],
  Number(process.argv[3]),
  Number(process.argv[4]),
];

const report = ({ requests, errors, timeouts, statusCodeStats }) => ({
  requests: requests.total,
  errors,
  timeouts,
  statuses: Object.fromEntries(
    Object.entries(statusCodeStats).map(([status, { count }]) => [status, count]),
  ),
});

let connection = 0;
const [unknownTokens, readiness] = await Promise.all([
  autocannon({
    url: `${url}/plants`,
    connections,
    duration,
    setupClient: (client) =>
      client.setHeaders({
        authorization: `Bearer pst_unknown${String(connection++).padStart(39, '0')}`,
      }),
  }),
  autocannon({ url: `${url}/health/ready`, connections, duration }),
]);
process.stdout.write(
  `${JSON.stringify({ unknownTokens: report(unknownTokens), readiness: report(readiness) })}\n`,
);
