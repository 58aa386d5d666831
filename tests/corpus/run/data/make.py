# Writes the .npy inputs of the tests/corpus/run/npy_*.strata programs (run from this directory:
# `python3 make.py`; the committed files were written by numpy 2.4.6). Every file but the broken
# ones is exactly what np.save writes.
import numpy as np

np.save("f32_5.npy", np.array([1.5, 2.0, 3.0, 4.0, 5.25], dtype=np.float32))
np.save("f64_5.npy", np.array([1.5, 2.0, 3.0, 4.0, 5.25], dtype=np.float64))
np.save("i32_2x3.npy", np.array([[1, -2, 3], [4, 5, 6]], dtype=np.int32))
np.save("i64_3.npy", np.array([-9223372036854775808, 0, 9223372036854775807], dtype=np.int64))
np.save("u32_2x2.npy", np.array([[0, 1], [4294967295, 7]], dtype=np.uint32))
np.save("u64_0.npy", np.zeros(0, dtype=np.uint64))
np.save("bool_4.npy", np.array([True, False, True, True]))
np.save("f64_1x1.npy", np.array([[-0.125]], dtype=np.float64))
np.save("fortran_i32_2x3.npy", np.asfortranarray(np.array([[1, -2, 3], [4, 5, 6]], dtype=np.int32)))
np.save("big_endian_f32_5.npy", np.array([1.5, 2.0, 3.0, 4.0, 5.25], dtype=">f4"))
# Broken files: the data cut short by one element, and a file that is not an .npy file.
with open("f32_5.npy", "rb") as f:
    data = f.read()
with open("truncated_f32_5.npy", "wb") as f:
    f.write(data[:-4])
with open("not_npy.npy", "w") as f:
    f.write("this is a text file, not an .npy file\n")
