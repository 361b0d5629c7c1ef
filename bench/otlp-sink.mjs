// A collector stand-in for `BENCH_TRACING=1`, in a process of its own so that it does not
// share the load generator's event loop: node otlp-sink.mjs starts an OTLP/HTTP endpoint
// on loopback that reads every export and answers 200 (as a collector that keeps up does),
// and prints its port as one JSON line.
import { createServer } from 'node:http';

const sink = createServer((request, response) => {
  request.resume();
  request.on('end', () =>
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(),
  );
});
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify(sink.address().port)}\n`);
