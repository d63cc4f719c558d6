import { writeFileSync } from 'node:fs';

/**
 * What a PDF thread is called in the operating system (`top -H`, `ps -L`, /proc/<pid>/task/<tid>/comm): it tells
 * the PDF threads apart from the process's other threads (the Temporal workflow thread is a Node worker thread
 * too), for an operator and for the benchmarks' CPU by thread. At most 15 characters, Linux's limit.
 */
export const PDF_THREAD_NAME = 'wathiq-pdf';

/**
 * Names the calling thread, where Linux lets a thread rename itself (/proc/thread-self/comm); elsewhere, or when
 * refused, it keeps Node's name for it.
 */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name);
  } catch {
    // not Linux, or not permitted: the name stays
  }
}
