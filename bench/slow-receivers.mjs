// Webhook receivers for `BENCH_SLOW_SUBSCRIBERS`, in a process of their own so that they
// do not share the load generator's event loop: node slow-receivers.mjs <count> <ms>
// starts <count> servers on loopback that answer each delivery after <ms>, and prints
// their ports as one JSON line.
import { createServer } from 'node:http';

const [count, delayMs] = process.argv.slice(2).map(Number);
const ports = [];
for (let index = 0; index < count; index++) {
  const receiver = createServer((request, response) => {
    request.resume();
    setTimeout(() => response.end(), delayMs);
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  ports.push(receiver.address().port);
}
process.stdout.write(`${JSON.stringify(ports)}\n`);
