// Countdowns such as "Available in 18h 12m".

/** `until` minus `now` as "18h 12m", "12m", "40s", and "3d 4h" only past
 * two days, so a day's lock reads "23h 59m" (never negative). */
export function countdown(until: Date, now: Date): string {
  const seconds = Math.max(0, Math.ceil((until.getTime() - now.getTime()) / 1000));
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours >= 48) return `${days}d ${hours % 24}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m`;
  return `${seconds}s`;
}

/** Whether `until` (ISO time) is still ahead of `now`. */
export function isAhead(until: string | null | undefined, now: Date): until is string {
  return !!until && new Date(until).getTime() > now.getTime();
}
