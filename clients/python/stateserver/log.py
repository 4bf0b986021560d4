"""A bounded record of the messages a client received, indexed from the first one."""
from collections import deque
from typing import Any, Deque, Iterator, List, Optional, Union, overload


class MessageLog:
    """The last `capacity` messages, addressed by their index since the client started.

    `len(log)` counts every message ever received, so `start = len(client.messages)` followed by
    `client.messages[start:]` reads what came since, as with a list. Reading an index that was
    dropped to respect the cap raises `LookupError` (a silent gap would hide messages); a
    capacity of 0 records nothing, and then only `len` is meaningful.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"expected a capacity of 0 or more, got {capacity}")
        self.capacity = capacity
        self._kept: Deque[Any] = deque(maxlen=capacity)
        self._count = 0

    def append(self, message: Any) -> None:
        self._count += 1
        if self.capacity:
            self._kept.append(message)

    @property
    def dropped(self) -> int:
        """How many messages are no longer kept (the oldest ones)."""
        return self._count - len(self._kept)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._kept))

    def _position(self, index: int) -> int:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"message {index} out of range (received {self._count})")
        if index < self.dropped:
            raise LookupError(self._lost(index))
        return index - self.dropped

    def _lost(self, index: int) -> str:
        return (f"message {index} is no longer recorded: the client keeps the last "
                f"{self.capacity} (spawn it with a larger `record`)")

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> List[Any]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            if step == 1 and start < stop and start < self.dropped:
                raise LookupError(self._lost(start))
            return [self[i] for i in range(start, stop, step)]
        return self._kept[self._position(index)]

    def index(self, message: Any, start: int = 0, stop: Optional[int] = None) -> int:
        """The index of the first message equal to `message` from `start` on."""
        stop = self._count if stop is None else min(stop, self._count)
        for position in range(max(start, 0), stop):
            if self[position] == message:
                return position
        raise ValueError(f"{message!r} is not in the recorded messages")

    def clear(self) -> None:
        """Forgets the kept messages (the count goes on)."""
        self._kept.clear()
