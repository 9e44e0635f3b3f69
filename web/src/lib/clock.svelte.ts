// One ticking clock for every countdown on the page.
let now = $state(new Date());
let timer: ReturnType<typeof setInterval> | undefined;

export const clock = {
  get now(): Date {
    timer ??= setInterval(() => (now = new Date()), 1000);
    return now;
  },
};
